/**
 * Capture quality (docs/graph.md, "What remember keeps"): what the hooks store of real-looking
 * Claude Code and Codex sessions, against what a person would want kept.
 *
 *   npx tsx bench/capture.ts [--embedder local|hash] [--verbose]
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/orgmem_test npx tsx bench/capture.ts
 *
 * A real server (the embedded default: PGlite, the bundled embedder, no LLM), one collection per
 * transcript of `bench/capture/`: the hooks' own capture (`plugins/claude-code/scripts/capture.mjs`, as a
 * SessionEnd: the transcript reader, then one queued remember per turn) runs on it, and the
 * extraction jobs are waited for. Then, against `bench/capture/labels.json`:
 *
 * - a stored memory (current, not archived) **matches** a labelled text when at least 70% of the
 *   label's content words are in the memory and at least 40% of the memory's are in the label
 *   (content words: lowercase, stop words dropped, a plural or possessive `s` dropped);
 * - **recall**: the share of `keep` facts some stored memory matches;
 * - **junk**: the share of stored memories that match no `keep` fact, or match a `never` line;
 * - **duplicates**: stored memories that say the same as an earlier one of their collection (each
 *   holds at least 80% of the other's content words);
 * - **secrets**: `secrets` strings (written inside `<private>`) found in any memory, archived
 *   raw texts included.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { capture } from '../plugins/claude-code/scripts/capture.mjs';
import { newTenant } from '../test/support/client.ts';
import { startServer } from '../test/support/server.ts';

const { values } = parseArgs({ options: { embedder: { type: 'string', default: 'local' }, verbose: { type: 'boolean', default: false } } });
const DIR = resolve(import.meta.dirname, 'capture');
const labels = JSON.parse(readFileSync(join(DIR, 'labels.json'), 'utf8')) as Record<
  string,
  { harness: string; keep: string[]; never: string[]; secrets: string[] }
>;

const STOP = new Set(
  'a an the is are was were be been being to of in on at for and or with by as it its that this these those from into so than then there their they them he she his her we our us you your i me my which who what when where how not do does did has have had will would can could should may might must also just only all any each every'.split(
    ' ',
  ),
);
const contentWords = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .replace(/'s\b/g, '')
      .split(/[^\p{L}\p{N}%@]+/u)
      .filter((w) => w && !STOP.has(w))
      .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w)),
  );
const share = (of: Set<string>, inside: Set<string>) => (of.size ? [...of].filter((w) => inside.has(w)).length / of.size : 0);
const matches = (memory: string, label: string) => {
  const m = contentWords(memory);
  const l = contentWords(label);
  return share(l, m) >= 0.7 && share(m, l) >= 0.4;
};
const sameSaying = (a: string, b: string) => share(contentWords(a), contentWords(b)) >= 0.8 && share(contentWords(b), contentWords(a)) >= 0.8;

const server = await startServer({ ORGMEM_EMBEDDER: values.embedder! });
const state = mkdtempSync(join(tmpdir(), 'orgmem-bench-capture-'));
const totals = { keep: 0, kept: 0, stored: 0, junk: 0, duplicates: 0, secrets: 0 };
try {
  const t = await newTenant(server.url, server.adminKey);
  const llm = await t.api('GET', '/v1/memory/extraction/config');
  process.stdout.write(
    `${Object.keys(labels).length} transcripts, ${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'embedded'}, embedder ${values.embedder}, LLM configured: ${llm.body.configured}\n\n`,
  );
  process.stdout.write(`${'transcript'.padEnd(22)} harness  kept/keep stored junk dup secrets\n`);
  for (const [name, label] of Object.entries(labels)) {
    const collection = `capture-${name}`;
    const file = join(DIR, `${name}.jsonl`);
    await capture({ url: server.url, key: t.key }, collection, { session_id: name, transcript_path: file, hook_event_name: 'SessionEnd' }, state);
    await jobsDone(t.id, collection);
    const current = ((await t.api('GET', `/v1/memory/collections/${collection}/memories?limit=200`)).body as { text: string }[]).map((m) => m.text);
    const every = ((await t.api('GET', `/v1/memory/collections/${collection}/memories?limit=200&include_archived=true`)).body as { text: string }[]).map(
      (m) => m.text,
    );
    const kept = label.keep.filter((k) => current.some((m) => matches(m, k)));
    const junk = current.filter((m) => !label.keep.some((k) => matches(m, k)) || label.never.some((n) => matches(m, n)));
    const duplicates = current.filter((m, i) => current.slice(0, i).some((earlier) => sameSaying(m, earlier)));
    const secrets = label.secrets.filter((s) => every.some((m) => m.toLowerCase().includes(s.toLowerCase())));
    totals.keep += label.keep.length;
    totals.kept += kept.length;
    totals.stored += current.length;
    totals.junk += junk.length;
    totals.duplicates += duplicates.length;
    totals.secrets += secrets.length;
    process.stdout.write(
      `${name.padEnd(22)} ${label.harness.padEnd(8)} ${`${kept.length}/${label.keep.length}`.padStart(9)} ${String(current.length).padStart(6)} ${String(junk.length).padStart(4)} ${String(duplicates.length).padStart(3)} ${String(secrets.length).padStart(7)}\n`,
    );
    if (values.verbose) {
      for (const k of label.keep.filter((k) => !kept.includes(k))) process.stdout.write(`    missed: ${k}\n`);
      for (const j of junk) process.stdout.write(`    junk:   ${j.replace(/\s+/g, ' ').slice(0, 160)}\n`);
      for (const d of duplicates) process.stdout.write(`    dup:    ${d.slice(0, 160)}\n`);
    }
  }
  const pct = (a: number, b: number) => `${b ? ((100 * a) / b).toFixed(1) : '0.0'}%`;
  process.stdout.write(
    `\nkept-fact recall ${pct(totals.kept, totals.keep)} (${totals.kept}/${totals.keep}), junk ${pct(totals.junk, totals.stored)} (${totals.junk}/${totals.stored} stored), duplicates ${totals.duplicates}, secrets stored ${totals.secrets}\n`,
  );
} finally {
  await server.close();
  rmSync(state, { recursive: true, force: true });
}

/** Waits until every extraction job of the collection has ended. */
async function jobsDone(tenantId: string, collection: string) {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const [left] = await server.app.db.query<{ n: number }>(
      `select count(*)::int as n from extraction_jobs where tenant_id = $1 and collection = $2 and state not in ('done', 'failed')`,
      [tenantId, collection],
    );
    if (!left!.n) return;
  }
  throw new Error(`extraction of ${collection} did not finish within 120 s`);
}
