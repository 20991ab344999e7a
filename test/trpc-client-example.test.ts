import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientProject } from './support/client-project.ts';
import { newTenant, shared } from './support/client.ts';

// Would compile without complaint if AppRouter degraded to `any` somewhere: each line must be an error.
const TYPED = `import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from 'orgmem/trpc';
const orgmem = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: 'http://127.0.0.1:1/trpc' })] });
export async function wrong(): Promise<string> {
  // @ts-expect-error text is required
  await orgmem.memories.create.mutate({ collection: 'c' });
  // @ts-expect-error memories.list needs its collection
  await orgmem.memories.list.query();
  // @ts-expect-error no such procedure
  await orgmem.memories.nope.query();
  const [first] = await orgmem.collections.list.query();
  // @ts-expect-error memory_count is a number
  return first?.memory_count ?? '';
}
`;

describe('examples/trpc-client', () => {
  let project: ReturnType<typeof clientProject>;
  beforeAll(() => {
    project = clientProject({ 'src/typed.ts': TYPED });
  });
  afterAll(() => project.remove());

  it('compiles under its `tsc --init` defaults, also checking every declaration file (orgmem’s too)', () => {
    // One run stands for both projects the package must serve: skipLibCheck false and the older
    // ES2022 lib only add errors to the `tsc --init` defaults, and those are stricter than `strict`.
    const run = project.compile('--skipLibCheck', 'false', '--target', 'es2022');
    expect(run.output).toBe('');
    expect(run.status).toBe(0);
  });

  it('stores and lists memories on a live server', async () => {
    const { url, adminKey } = shared();
    const t = await newTenant(url, adminKey);
    const run = spawnSync(process.execPath, [join(project.dir, 'dist', 'main.js')], {
      env: { ...process.env, ORGMEM_URL: url, ORGMEM_API_KEY: t.key },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const stored = [...run.stdout.matchAll(/^stored (\S+) in example: (.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(stored.map(([, text]) => text)).toEqual(['Ana prefers oat milk', 'Ben is allergic to peanuts']);
    const listed = [...run.stdout.matchAll(/^listed (\S+): (.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(listed.sort()).toEqual(stored.sort());
    expect(run.stdout).toMatch(/^collection example: 2 memories$/m);
    // What the example printed is what the server holds.
    const rest = await t.api('GET', '/v1/memory/collections/example/memories');
    expect(rest.body.map((m: { id: string }) => m.id).sort()).toEqual(stored.map(([id]) => id).sort());
  });
});
