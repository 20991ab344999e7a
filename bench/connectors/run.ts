/**
 * Connector sync throughput: a first sync of 10,000 records, an incremental one after 1% of them
 * changed and 1% more were added, and an idle one with nothing new.
 *
 *   npx tsx bench/connectors/run.ts [--records 10000] [--providers linear,hubspot,slack,notion]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/connectors/run.ts
 *   ORGMEM_EMBEDDER=local npx tsx bench/connectors/run.ts --providers linear
 *
 * Per provider: its fake API on 127.0.0.1 (test/fakes/providers, in a process of its own through
 * fake-host.ts, with no page cap of its own so the connector's page size applies) holding the
 * records, and a fresh in-process service pointed at it: embedded PGlite, or with DATABASE_URL (or TEST_DATABASE_URL) a throw-away PostgreSQL database
 * on that server, dropped after. No worker, so no scheduled sync runs between the timed ones. Each
 * sync is syncNow() end to end, and the bench fails unless it stored exactly what changed
 * (N memories after the first sync, N + 1% after the second, nothing after the third).
 *
 * The time is split by wrapping the connector's page iterator (fetch: HTTP to the fake, the fake's
 * own work, parsing) and the embedder (embed); store is the rest (the database: known-record
 * lookup, inserts, in-place updates, lease renewals). "of it fake" is the part of fetch the fake
 * process was busy answering (its event loop's active time): what a real provider's latency and
 * rate limit replace, usually with far more.
 */
import { parseArgs } from 'node:util';
import { connectors } from '../../src/services/connectors/providers/index.ts';
import { syncNow } from '../../src/services/connectors/sync.ts';
import { newTenant } from '../../test/support/client.ts';
import { startServer } from '../../test/support/server.ts';
import { round } from '../lib/stats.ts';
import { PROVIDERS as KNOWN, startHostedFake } from './fake-host.ts';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '10000' }, providers: { type: 'string', default: 'linear,hubspot,slack,notion' } },
});
const N = Number(values.records);
const STEP = Math.max(1, Math.round(N / 100)); // 1%
const PROVIDERS = values.providers!.split(',').map((p) => p.trim());
for (const p of PROVIDERS) if (!KNOWN.includes(p)) throw new Error(`unknown provider ${p}: one of ${KNOWN.join(', ')}`);
const EMBEDDER = process.env.ORGMEM_EMBEDDER || 'hash';
// startServer makes its throw-away database on TEST_DATABASE_URL's server.
const base = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL;
if (base) process.env.TEST_DATABASE_URL = base;

const WORDS = 'harbour tide ferry pilot buoy anchor survey dredging pier lighthouse budget schedule crane cargo berth'.split(' ');
const title = (i: number) => `Record ${i} ${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`;
/** About 300 characters of deterministic prose, different per record and revision. */
const body = (i: number, rev = 0) =>
  `${Array.from({ length: 40 }, (_, k) => WORDS[(i * 7 + rev * 11 + k * k * 3 + k) % WORDS.length]).join(' ')}. Record ${i}, revision ${rev}.`;

// Time split: the connector's pages are read through a timed iterator, the embedder through a timed call.
const split = { fetch: 0, embed: 0 };
for (const p of PROVIDERS) {
  const c = connectors[p as keyof typeof connectors];
  const pages = c.pages.bind(c);
  c.pages = async function* (ctx) {
    const it = pages(ctx)[Symbol.asyncIterator]();
    for (;;) {
      const t0 = performance.now();
      const next = await it.next();
      split.fetch += performance.now() - t0;
      if (next.done) return;
      yield next.value;
    }
  };
}

interface Row {
  provider: string;
  sync: string;
  seconds: number;
  records: number;
  records_per_s: number | null;
  requests: number;
  provider_s: number;
  fetch_s: number;
  embed_s: number;
  store_s: number;
}
const rows: Row[] = [];
let database = 'pglite';

async function bench(provider: string) {
  const fake = await startHostedFake(provider);
  const ids = await fake.put(Array.from({ length: N }, (_, i) => ({ title: title(i), body: body(i) })));
  // The provider's API variable points at the fake; one on the tenant's own site (confluence) has the fake's URL in its config.
  const { api } = connectors[provider as keyof typeof connectors].sync;
  const apiUrl = 'env' in api ? { [api.env]: fake.url } : {};
  const server = await startServer({ ORGMEM_EMBEDDER: EMBEDDER, ...apiUrl }, { worker: false });
  try {
    database = server.app.db.kind;
    const embedder = server.app.embedder;
    const embed = embedder.embed.bind(embedder);
    embedder.embed = async (texts) => {
      const t0 = performance.now();
      try {
        return await embed(texts);
      } finally {
        split.embed += performance.now() - t0;
      }
    };
    const t = await newTenant(server.url, server.adminKey);
    const collection = `bench-${provider}`;
    const conn = await t.api('POST', '/v1/memory/connections', { provider, collection, name: `${provider} bench`, ...fake.connection });
    if (conn.status !== 201) throw new Error(`connection create answered ${conn.status}: ${JSON.stringify(conn.body)}`);
    const count = async () =>
      (await server.app.db.query<{ n: number }>('select count(*)::int as n from memories where tenant_id = $1 and collection = $2', [t.id, collection]))[0]!.n;

    async function sync(name: string, expectSynced: number, expectMemories: number) {
      split.fetch = split.embed = 0;
      const before = await fake.stats();
      const t0 = performance.now();
      const r = await syncNow(server.app, t.id, conn.body.id);
      const ms = performance.now() - t0;
      if (r.status !== 'active') throw new Error(`${provider} ${name} sync failed: ${r.last_error}`);
      const after = await fake.stats();
      const memories = await count();
      if (r.synced !== expectSynced || memories !== expectMemories) {
        throw new Error(`${provider} ${name} sync: synced ${r.synced} (expected ${expectSynced}), ${memories} memories (expected ${expectMemories})`);
      }
      const row: Row = {
        provider,
        sync: name,
        seconds: round(ms / 1000, 2),
        records: r.synced,
        records_per_s: r.synced ? round(r.synced / (ms / 1000)) : null,
        requests: after.requests - before.requests,
        provider_s: round((after.busy_ms - before.busy_ms) / 1000, 2),
        fetch_s: round(split.fetch / 1000, 2),
        embed_s: round(split.embed / 1000, 2),
        store_s: round((ms - split.fetch - split.embed) / 1000, 2),
      };
      rows.push(row);
      console.log(JSON.stringify({ database, embedder: embedder.name, ...row }));
    }

    await sync('first', N, N);
    // 1% changed, spread over the records (old and recent alike), then 1% new.
    const changed = Array.from({ length: STEP }, (_, k) => Math.floor((k * N) / STEP));
    await fake.put(changed.map((i) => ({ id: ids[i]!, title: title(i), body: body(i, 1) })));
    await fake.put(Array.from({ length: STEP }, (_, k) => ({ title: title(N + k), body: body(N + k) })));
    await sync('incremental', 2 * STEP, N + STEP);
    await sync('idle', 0, N + STEP);
  } finally {
    await server.close();
    await fake.close();
  }
}

for (const p of PROVIDERS) await bench(p);

const cols: Array<[string, (r: Row) => string | number]> = [
  ['provider', (r) => r.provider],
  ['sync', (r) => r.sync],
  ['records', (r) => r.records],
  ['seconds', (r) => r.seconds.toFixed(2)],
  ['records/s', (r) => r.records_per_s ?? '-'],
  ['requests', (r) => r.requests],
  ['fetch s', (r) => r.fetch_s.toFixed(2)],
  ['of it fake', (r) => r.provider_s.toFixed(2)],
  ['embed s', (r) => r.embed_s.toFixed(2)],
  ['store s', (r) => r.store_s.toFixed(2)],
];
const cells = [cols.map(([h]) => h), ...rows.map((r) => cols.map(([, f]) => String(f(r))))];
const widths = cols.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
console.log(`\n${database}, embedder ${EMBEDDER}, ${N} records, +${STEP} changed and +${STEP} new before the incremental sync`);
for (const c of cells) console.log(c.map((v, i) => (i < 2 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  '));
process.exit(0);
