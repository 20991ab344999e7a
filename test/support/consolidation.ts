import type { Tenant } from './client.ts';
import { col } from './graph.ts';
import type { TestServer } from './server.ts';

/** What a consolidation run finds in `notes` (docs/consolidation.md): near-duplicates, an outdated fact, old noise. */
export const DUPLICATES = [
  'The payments service deploys every Friday at noon from the main branch.',
  'The payments service deploys every Friday at noon from the main branch!',
  'the payments service deploys every friday at noon from the main branch',
];
export const OLD_PORT = 'The staging database of the billing team listens on port 5432.';
export const NEW_PORT = 'The staging database of the billing team listens on port 6543.';
export const NOISE = 'Scratch line about nothing in particular, kept by mistake.';

/** Stores them in the tenant's `notes`; the noise backdated, as the archive rule wants memories stored more than 30 days ago. */
export async function seedNotes(s: TestServer, t: Tenant) {
  const add = async (text: string, extra: Record<string, unknown> = {}) =>
    (await t.api('POST', `${col('notes')}/memories`, { text, category: 'fact', ...extra })).body as { id: string };
  const dups = [];
  for (const text of DUPLICATES) dups.push(await add(text, { importance: 0.6 }));
  const oldPort = await add(OLD_PORT, { observed_at: '2026-01-01T00:00:00.000Z' });
  const newPort = await add(NEW_PORT, { observed_at: '2026-06-01T00:00:00.000Z' });
  const noise = await add(NOISE, { category: 'other', importance: 0.1 });
  await s.app.db.query(`update memories set created_at = now() - interval '40 days' where tenant_id = $1 and id = $2`, [t.id, noise.id]);
  return { add, dups, oldPort, newPort, noise };
}
