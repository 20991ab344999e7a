/**
 * Retrieval quality on LoCoMo (Maharana et al., 2024): every dialogue turn becomes a memory
 * (`[session date] speaker: text`, metadata {dia_id}; with --observed `speaker: text` and the
 * session date as its observed_at, docs/time.md), one collection per conversation; every
 * question of categories 1 to 4 is searched with limit 50, and recall@k of its evidence dia_ids
 * is reported per category and overall, for each mode, with the bundled embedder (or the hash
 * embedder, --embedder hash), with session-level recall@10 (one of the evidence's sessions
 * among the first 10 results' sessions).
 *
 *   node --import tsx bench/locomo/run.ts /path/to/locomo10.json [--observed] [--db orgmem_bench_locomo] [--keep] [--skip-load]
 *       [--modes hybrid,vector,text] [--conversations 0-9] [--embedder local|hash] [--limit 50] [--captions] [--distractors]
 *       [--text-cap N]
 *
 * Loading takes minutes with the bundled embedder: --keep then --skip-load searches the same
 * database again (--conversations 0-4 is the half constants are tuned on, 5-9 the other).
 *
 * The data file is read where it lies; nothing of it is copied into the project.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { api, createDatabase, createTenantKey, dropDatabase, startOrgmem } from '../lib/server.ts';
import { pool, round } from '../lib/stats.ts';
import { normaliseEvidence } from './evidence.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: 'string', default: 'orgmem_bench_locomo' },
    base: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    port: { type: 'string', default: '18932' },
    keep: { type: 'boolean', default: false },
    'skip-load': { type: 'boolean', default: false },
    // LoCoMo turns that share a photo carry its BLIP caption; appended as "[shares <caption>]".
    captions: { type: 'boolean', default: false },
    // The session date as each turn's observed_at (event time) instead of a prefix of its text.
    observed: { type: 'boolean', default: false },
    // The search limit; recall is reported for the k up to it (a page of 10 fuses 40 candidates per side, 50 fuses 100).
    limit: { type: 'string', default: '50' },
    // The modes searched, comma-separated (iterating on hybrid needs only hybrid; "vector,hybrid" compares vector storages: text mode does not read embeddings).
    modes: { type: 'string', default: 'hybrid,vector,text' },
    // The conversations whose questions are searched, as "first-last" (0-based): "0-4" is the tuning half, "5-9" the report half.
    conversations: { type: 'string', default: '0-9' },
    // The embedder: the bundled USE-lite ("local") or the hash embedder ("hash").
    embedder: { type: 'string', default: 'local' },
    // Each collection also holds the other conversations' turns as passages of a file chunk's length (distractors below).
    distractors: { type: 'boolean', default: false },
    // ORGMEM_SEARCH_TEXT_CAP for the server (with --distractors 2000 unless given: below).
    'text-cap': { type: 'string' },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: bench/locomo/run.ts /path/to/locomo10.json');

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; evidence?: string[]; category: number }>;
}

const LIMIT = Number(args.limit);
const KS = [5, 10, 25, 50].filter((k) => k <= LIMIT);
const MODES = args.modes!.split(',') as Array<'hybrid' | 'vector' | 'text'>;
const [FIRST, LAST] = args.conversations!.split('-').map(Number) as [number, number];
const CATEGORIES = [1, 2, 3, 4];
const log = (msg: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
const dbUrl = await createDatabase(args.base!, args.db!, !args['skip-load']);
const env = {
  DATABASE_URL: dbUrl,
  ORGMEM_EMBEDDER: args.embedder!,
  ORGMEM_DB_POOL: '6',
  ORGMEM_RATE_LIMIT: 'false',
  // With the passages a collection holds about 1,050 memories, past the text side's default cap
  // (1,000), past which it ranks only the newest 250 matches (docs/search.md): the passages,
  // stored last. A cap above the collections keeps every match ranked, as in a collection within
  // the cap, so what is measured is the ranking (--text-cap 1000 measures the sampling instead).
  ...(args['text-cap'] || args.distractors ? { ORGMEM_SEARCH_TEXT_CAP: args['text-cap'] ?? '2000' } : {}),
};
const keyFile = `/tmp/${args.db}.key`;
const key = args['skip-load'] ? readFileSync(keyFile, 'utf8') : createTenantKey(env, 'locomo');
writeFileSync(keyFile, key);
const server = await startOrgmem(env, Number(args.port));

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** LoCoMo's session dates ("1:56 pm on 8 May, 2023") as an instant; the data set gives no zone, so UTC. */
function sessionInstant(date: string): string {
  const m = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) (\w+),? (\d{4})$/.exec(date.trim());
  const month = m ? MONTHS.indexOf(m[5]!) : -1;
  if (!m || month < 0) throw new Error(`unreadable session date: ${date}`);
  const hour = (Number(m[1]) % 12) + (m[3] === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/**
 * Dialogue turns of one conversation as memories, in session order. Each carries the
 * conversation as its `thread` and its place in it as `seq`: the provenance a neighbour signal
 * would link turns by (bench/README.md, "Second hop: what was tried"; search does not read it).
 */
function turns(s: Sample) {
  const conv = s.conversation;
  const out: Array<{ text: string; metadata: { dia_id: string; thread: string; seq: number }; source: string; observed_at?: string }> = [];
  for (let n = 1; Array.isArray(conv[`session_${n}`]) || conv[`session_${n}_date_time`]; n++) {
    const date = conv[`session_${n}_date_time`] as string;
    for (const t of (conv[`session_${n}`] as Turn[] | undefined) ?? []) {
      const caption = args.captions && t.blip_caption ? ` [shares ${t.blip_caption}]` : '';
      const said = `${t.speaker}: ${t.text}${caption}`;
      const metadata = { dia_id: t.dia_id, thread: s.sample_id, seq: out.length + 1 };
      out.push(
        args.observed
          ? { text: said, observed_at: sessionInstant(date), metadata, source: 'locomo' }
          : { text: `[${date}] ${said}`, metadata, source: 'locomo' },
      );
    }
  }
  return out;
}

/** A file chunk's length (src/services/files/file-memories.ts): a distractor passage's at most. */
const PASSAGE_CHARS = 2000;

/**
 * With --distractors, the long memories beside one conversation's turns: every other
 * conversation's turns, one per line as "speaker: text", joined into passages of at most a file
 * chunk's length. They are never evidence, but hold many of any question's words, as an unrelated
 * document would: what BM25's length normalisation must keep from crowding out the short turns
 * that answer (bench/README.md, "Length normalisation beside file chunks").
 */
function distractors(s: Sample) {
  const out: Array<{ text: string; metadata: { passage: string }; source: string }> = [];
  let lines: string[] = [];
  const flush = (from: Sample) => {
    if (lines.length) out.push({ text: lines.join('\n'), metadata: { passage: `${from.sample_id}#${out.length}` }, source: 'locomo-distractor' });
    lines = [];
  };
  for (const other of samples.filter((o) => o !== s)) {
    for (const line of turns(other).map((t) => t.text)) {
      if (lines.length && [...lines, line].join('\n').length > PASSAGE_CHARS) flush(other);
      lines.push(line.slice(0, PASSAGE_CHARS));
    }
    flush(other);
  }
  return out;
}

/** "D3:5" -> "D3": a turn's session. */
const sessionOf = (diaId: string) => diaId.split(':')[0]!;

const collectionOf = (s: Sample) => s.sample_id.replace(/[^A-Za-z0-9._-]/g, '-');
const report: Record<string, unknown> = {
  file,
  at: new Date().toISOString(),
  embedder: args.embedder === 'local' ? 'local USE-lite 512-d' : args.embedder,
  conversations: args.conversations,
  limit: LIMIT,
  min_score: 0,
  captions: args.captions,
  session_date: args.observed ? 'observed_at' : 'text prefix',
  distractors: args.distractors,
  text_cap: env.ORGMEM_SEARCH_TEXT_CAP ?? 'default',
};
try {
  const started = performance.now();
  let stored = 0;
  let passages = 0;
  for (const s of samples) {
    const extra = args.distractors ? distractors(s) : [];
    const all = [...turns(s), ...extra];
    for (let i = 0; i < all.length && !args['skip-load']; i += 100) {
      const res = await api(server.url, key, 'POST', `/v1/memory/collections/${collectionOf(s)}/memories/bulk`, all.slice(i, i + 100));
      if (res.status !== 201) throw new Error(`store: ${res.status} ${JSON.stringify(res.body)}`);
    }
    stored += all.length - extra.length;
    passages += extra.length;
  }
  if (!args['skip-load'])
    log(`stored ${stored} turns and ${passages} passages of ${samples.length} conversations in ${round((performance.now() - started) / 1000)} s`);
  report.turns = stored;
  if (args.distractors) report.passages = passages;

  const questions = samples.slice(FIRST, LAST + 1).flatMap((s) =>
    s.qa
      // `id`: the question's place in the data set (a conversation may ask the same question twice).
      .map((q, i) => ({
        id: `${s.sample_id}#${i}`,
        collection: collectionOf(s),
        question: q.question,
        category: q.category,
        evidence: normaliseEvidence(q.evidence ?? []),
      }))
      .filter((q) => CATEGORIES.includes(q.category)),
  );
  const usable = questions.filter((q) => q.evidence.length > 0);
  report.questions = { categories_1_to_4: questions.length, with_evidence: usable.length };
  log(`${usable.length} questions with evidence (of ${questions.length})`);

  const results: Record<string, Record<string, Record<string, number>>> = {};
  // Each question's recall at each k, per mode, as answered: what compare.ts pairs two runs by.
  const perQuestion: Record<string, Array<{ id: string; category: number; recall: number[] }>> = {};
  for (const mode of MODES) {
    perQuestion[mode] = [];
    // sums[category][k] of per-question recall; the last entry is session-level recall@10
    const sums = new Map<string, number[]>();
    const counts = new Map<string, number>();
    const t0 = performance.now();
    await pool(usable, 4, async (q) => {
      const res = await api(server.url, key, 'POST', `/v1/memory/collections/${q.collection}/search`, { query: q.question, mode, limit: LIMIT, min_score: 0 });
      if (res.status !== 200) throw new Error(`search: ${res.status} ${JSON.stringify(res.body)}`);
      const got = (res.body.results as Array<{ metadata: { dia_id: string } }>).map((r) => r.metadata.dia_id);
      const recall = KS.map((k) => q.evidence.filter((e) => got.slice(0, k).includes(e)).length / q.evidence.length);
      perQuestion[mode]!.push({ id: q.id, category: q.category, recall: [...recall] });
      // Session level: one of the evidence's sessions among the sessions of the first 10 results.
      const sessions = new Set(got.slice(0, 10).filter(Boolean).map(sessionOf));
      recall.push(q.evidence.some((e) => sessions.has(sessionOf(e))) ? 1 : 0);
      // The share of the first 10 results that are distractor passages (none without --distractors).
      recall.push(got.slice(0, 10).filter((id) => id === undefined).length / 10);
      for (const cat of [String(q.category), 'overall']) {
        const acc = sums.get(cat) ?? [...KS, 0, 0].map(() => 0);
        recall.forEach((r, i) => (acc[i]! += r));
        sums.set(cat, acc);
        counts.set(cat, (counts.get(cat) ?? 0) + 1);
      }
    });
    results[mode] = Object.fromEntries(
      [...CATEGORIES.map(String), 'overall'].map((cat) => [
        cat === 'overall' ? 'overall' : `category_${cat}`,
        {
          questions: counts.get(cat) ?? 0,
          ...Object.fromEntries(
            [...KS.map((k) => `recall@${k}`), 'session_recall@10', 'passages@10']
              .slice(0, args.distractors ? undefined : -1)
              .map((name, i) => [name, round((100 * sums.get(cat)![i]!) / counts.get(cat)!)]),
          ),
        },
      ]),
    );
    log(`${mode} (${round((performance.now() - t0) / 1000)} s): ${JSON.stringify(results[mode]!.overall)}`);
  }
  report.recall = results;
  report.per_question = perQuestion;
  report.dragon_baseline = { 'recall@5': 56.7, 'recall@10': 66.2, 'recall@25': 76.7, 'recall@50': 82.7 };
} finally {
  await server.stop();
}
mkdirSync('bench/results', { recursive: true });
const variant = [
  args.captions && 'captions',
  args.observed && 'observed',
  LIMIT !== 50 && `limit${LIMIT}`,
  args.embedder !== 'local' && args.embedder,
  args.conversations !== '0-9' && `conv${args.conversations}`,
  args.distractors && 'distractors',
  args['text-cap'] && `cap${args['text-cap']}`,
];
const out = `bench/results/${['locomo', ...variant.filter(Boolean)].join('-')}.json`;
writeFileSync(out, JSON.stringify(report, null, 2));
log(`wrote ${out}`);
if (!args.keep) await dropDatabase(args.base!, args.db!);
