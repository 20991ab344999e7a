import type { Tenant } from './client.ts';
import { col } from './graph.ts';
import type { TestServer } from './server.ts';
import { until } from './until.ts';

/**
 * What the proxy tests write and read back, the same for every proxy: a memory written the plain
 * way, the tenant's remember jobs, and the turns a proxy stored. `server` is read at each call
 * (the test's server starts in its beforeAll).
 */
export function proxyReads(server: () => TestServer) {
  const remember = async (t: Tenant, collection: string, text: string) => (await t.api('POST', `${col(collection)}/memories`, { text })).body.id as string;
  const jobs = async (t: Tenant) =>
    (await server().app.db.query<{ n: number }>('select count(*)::int as n from extraction_jobs where tenant_id = $1', [t.id]))[0]!.n;
  /** The texts the proxy stored (its remembers' raw memories, not the facts their jobs extract from them), once its turn's store has run: a stream stores at its end. */
  const storedTexts = (t: Tenant) =>
    until(
      'the turn stored',
      async () => {
        const rows = await server().app.db.query<{ text: string }>(
          "select text from memories where tenant_id = $1 and source = 'remember' and not metadata ? 'remembered_from' order by created_at",
          [t.id],
        );
        return rows.length ? rows.map((r) => r.text) : undefined;
      },
      5_000,
    );
  return { remember, jobs, storedTexts };
}
