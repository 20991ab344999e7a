/**
 * Retrieval quality on synthetic notes with known links between them, a data set of the bench's
 * own beside LoCoMo (bench/locomo/run.ts), to check that a ranking change made for one does not
 * hurt the other. People are assigned to code-named projects, projects are based in cities, and
 * people have habits; the questions are single-hop ("Which project is Ana Novak working on?",
 * one note), two-hop ("Which city is Ana Novak's team based in?", her assignment and her
 * project's city, which shares no rare word with the question) and habits. The notes are written
 * as journals (metadata `thread` and `seq`, as bench/locomo/run.ts writes its turns) in a shuffled
 * order, so a note's neighbours are unrelated to it: a neighbour signal can only hurt here.
 * Deterministic.
 *
 *   node --import tsx bench/linked-notes/run.ts [--embedder hash|local] [--db orgmem_bench_linked] [--keep] [--skip-load]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { api, createDatabase, createTenantKey, dropDatabase, startOrgmem } from '../lib/server.ts';
import { pool, rng, round } from '../lib/stats.ts';
import { CITIES, DRINKS, FIRST, HOBBIES, LAST } from '../search/corpus.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'orgmem_bench_linked' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    port: { type: 'string', default: '18933' },
    keep: { type: 'boolean', default: false },
    'skip-load': { type: 'boolean', default: false },
    embedder: { type: 'string', default: 'hash' },
    modes: { type: 'string', default: 'hybrid,vector,text' },
  },
});

const CODENAMES = [
  'Falcon',
  'Heron',
  'Juniper',
  'Basalt',
  'Cobalt',
  'Meridian',
  'Quasar',
  'Tundra',
  'Sequoia',
  'Obsidian',
  'Lantern',
  'Mistral',
  'Pebble',
  'Zephyr',
  'Atlas',
  'Harbor',
  'Ember',
  'Glacier',
  'Nimbus',
  'Orchid',
];
const KS = [5, 10];
const LIMIT = 10;
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

interface Note {
  id: string;
  text: string;
}
interface Question {
  kind: 'single-hop' | 'two-hop' | 'habit';
  query: string;
  evidence: string[];
}

/** The notes and questions, the same for every run. */
function dataset() {
  const r = rng(31);
  const notes: Note[] = [];
  const questions: Question[] = [];
  const note = (text: string) => {
    const id = `n${notes.length + 1}`;
    notes.push({ id, text });
    return id;
  };
  const projectNote = new Map<string, string>();
  for (const [i, code] of CODENAMES.entries())
    projectNote.set(code, note(`The ${code} team is based in ${CITIES[i % CITIES.length]} and ships every second week.`));
  const people = FIRST.flatMap((f, i) => [`${f} ${LAST[i % LAST.length]}`, `${f} ${LAST[(i + 7) % LAST.length]}`]);
  for (const person of people) {
    const code = r.pick(CODENAMES);
    const assigned = note(`${person} has been assigned to the ${code} project since the reorganisation.`);
    const drink = note(`${person} always starts the morning with ${r.pick(DRINKS)}.`);
    note(`${person} spends weekends on ${r.pick(HOBBIES)}.`);
    note(`${person} met ${r.pick(people)} to review the ${r.pick(CODENAMES)} milestones.`);
    questions.push({ kind: 'single-hop', query: `Which project is ${person} working on?`, evidence: [assigned] });
    questions.push({ kind: 'two-hop', query: `Which city is ${person}'s team based in?`, evidence: [assigned, projectNote.get(code)!] });
    questions.push({ kind: 'habit', query: `What does ${person} drink in the morning?`, evidence: [drink] });
  }
  // Shuffled into four journals: a note's neighbours are unrelated to it.
  const order = notes
    .map((n) => ({ n, k: r.next() }))
    .sort((a, b) => a.k - b.k)
    .map(({ n }) => n);
  const memories = order.map((n, i) => ({ text: n.text, source: 'notes', metadata: { note: n.id, thread: `journal-${i % 4}`, seq: Math.floor(i / 4) + 1 } }));
  return { memories, questions };
}

const { memories, questions } = dataset();
const dbUrl = await createDatabase(args.base!, args.db!, !args['skip-load']);
const env = { DATABASE_URL: dbUrl, ORGMEM_EMBEDDER: args.embedder!, ORGMEM_DB_POOL: '6', ORGMEM_RATE_LIMIT: 'false' };
const keyFile = `/tmp/${args.db}.key`;
const key = args['skip-load'] ? readFileSync(keyFile, 'utf8') : createTenantKey(env, 'linked');
writeFileSync(keyFile, key);
const server = await startOrgmem(env, Number(args.port));
const report: Record<string, unknown> = {
  at: new Date().toISOString(),
  embedder: args.embedder,
  notes: memories.length,
  questions: questions.length,
  limit: LIMIT,
};
try {
  for (let i = 0; i < memories.length && !args['skip-load']; i += 100) {
    const res = await api(server.url, key, 'POST', '/v1/memory/collections/notes/memories/bulk', memories.slice(i, i + 100));
    if (res.status !== 201) throw new Error(`store: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const results: Record<string, Record<string, Record<string, number>>> = {};
  for (const mode of args.modes!.split(',')) {
    const sums = new Map<string, number[]>();
    const counts = new Map<string, number>();
    await pool(questions, 4, async (q) => {
      const res = await api(server.url, key, 'POST', '/v1/memory/collections/notes/search', { query: q.query, mode, limit: LIMIT, min_score: 0 });
      if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
      const got = (res.body.results as Array<{ metadata: { note: string } }>).map((x) => x.metadata.note);
      const recall = KS.map((k) => q.evidence.filter((e) => got.slice(0, k).includes(e)).length / q.evidence.length);
      for (const kind of [q.kind, 'overall']) {
        const acc = sums.get(kind) ?? KS.map(() => 0);
        recall.forEach((x, i) => (acc[i]! += x));
        sums.set(kind, acc);
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
      }
    });
    results[mode] = Object.fromEntries(
      [...sums].map(([kind, acc]) => [
        kind,
        { questions: counts.get(kind)!, ...Object.fromEntries(KS.map((k, i) => [`recall@${k}`, round((100 * acc[i]!) / counts.get(kind)!)])) },
      ]),
    );
    log(`${mode}: ${JSON.stringify(results[mode])}`);
  }
  report.recall = results;
} finally {
  await server.stop();
}
mkdirSync('bench/results', { recursive: true });
writeFileSync(`bench/results/linked-notes-${args.embedder}.json`, JSON.stringify(report, null, 2));
if (!args.keep) await dropDatabase(args.base!, args.db!);
