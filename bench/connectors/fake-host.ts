/**
 * A provider fake in a process of its own, driven over IPC by run.ts: the provider's work (its
 * sorting, paging, JSON) stays off the service's event loop, and its busy time is measured apart,
 * as the share a real provider's own latency would take instead.
 *
 *   node --import tsx bench/connectors/fake-host.ts <provider>   (spawned by run.ts)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { SyncedProvider } from '../../src/schemas/providers/index.ts';
import { providerFakes } from '../../test/fakes/providers/index.ts';

/** Every provider the service syncs has a fake to bench against. */
export const PROVIDERS = Object.keys(providerFakes);

type Request = { op: 'put'; records: Array<{ id?: string; title: string; body: string }> } | { op: 'stats' };

/** The fake as run.ts sees it: `put` answers the ids, `stats` the requests served and the ms the fake was busy. */
export interface HostedFake {
  url: string;
  connection: { credentials: Record<string, unknown>; config: Record<string, unknown> };
  put(records: Array<{ id?: string; title: string; body: string }>): Promise<string[]>;
  stats(): Promise<{ requests: number; busy_ms: number }>;
  close(): Promise<void>;
}

export async function startHostedFake(provider: string): Promise<HostedFake> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [provider], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let closing = false;
  // A fake that dies leaves the sync waiting on it: end the run loudly instead.
  child.on('exit', (code) => {
    if (closing) return;
    console.error(`the ${provider} fake exited with ${code}`);
    process.exit(1);
  });
  const replies: Array<(m: any) => void> = [];
  child.on('message', (m) => replies.shift()?.(m));
  const ask = (req?: Request) => new Promise<any>((resolve) => (replies.push(resolve), req && child.send(req)));
  const { url, connection } = await ask();
  return {
    url,
    connection,
    put: async (records) => (await ask({ op: 'put', records })).ids,
    stats: () => ask({ op: 'stats' }),
    close: () => new Promise<void>((resolve) => ((closing = true), child.once('exit', () => resolve()), child.kill())),
  };
}

// In the child: start the fake and answer run.ts until it goes away.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const provider = process.argv[2] as SyncedProvider;
  // The provider's own page limit only: the connector asks for its page size.
  const fake = await providerFakes[provider]({ pageSize: 1000 });
  process.on('disconnect', () => process.exit(0));
  process.on('message', (req: Request) => {
    if (req.op === 'put') process.send!({ ids: req.records.map((r) => fake.put(r).id) });
    else process.send!({ requests: fake.requests.length, busy_ms: performance.eventLoopUtilization().active });
  });
  process.send!({ url: fake.url, connection: fake.connection() });
}
