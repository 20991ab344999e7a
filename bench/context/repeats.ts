/**
 * Repeats in the context block (docs/context.md, "No repeats"), in this process on an embedded
 * database (PGlite in memory) with the bundled embedder, the embedded default: a synthetic set of
 * clusters of near-copies (the same thing said six ways: reworded, shortened, with a tail, some
 * stored as facts so that they reach the stable part) and distinct memories on the same topics
 * (the hard cases: one word apart in meaning). It prints the cosines within clusters and between
 * distinct memories (what the threshold is chosen from), then, for every query and budget, the
 * repeats in the block (memories shown minus the distinct things they say) and whether the block
 * stayed within its budget.
 *
 *   node --import tsx bench/context/repeats.ts
 *
 * It calls the service over HTTP only, so the same file measures an older checkout: copy it into
 * a worktree of that commit and run it there.
 */
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { pino } from 'pino';
import { closeApp, createApp } from '../../host/app.ts';
import { buildServer } from '../../host/server.ts';
import { loadConfig } from '../../src/core/config.ts';
import { createTenant } from '../../src/services/access/tenants.ts';
import { round } from '../lib/stats.ts';

/** Each cluster: one thing said six ways. The first and fourth are stored as facts (the stable part). */
const CLUSTERS = [
  [
    'Remember to run the database migrations before deploying.',
    'Reminder: run the database migrations before you deploy.',
    'Before deploying, remember to run the database migrations.',
    'Run the database migrations before every deploy.',
    'Remember: database migrations run before deploying.',
    'Remember to run the database migrations before deploying!',
  ],
  [
    'Ana prefers oat milk in her coffee.',
    'Ana likes oat milk in her coffee.',
    'Ana prefers oat milk in coffee.',
    'In her coffee, Ana prefers oat milk.',
    'Ana prefers her coffee with oat milk.',
    'ana prefers oat milk in her coffee',
  ],
  [
    'The staging server is called ares.',
    'The staging server is named ares.',
    'Our staging server is called ares.',
    'The name of the staging server is ares.',
    'Staging server: ares.',
    'The staging server is called ares (noted).',
  ],
  [
    'The team decided to move the launch to March.',
    'The team decided to move the launch to March. Confirmed.',
    'The launch moves to March, the team decided.',
    'Team decision: the launch is moved to March.',
    'The team decided that the launch moves to March.',
    'The team decided to move the launch to March (from the meeting notes).',
  ],
  [
    'Code reviews need two approvals before merging.',
    'Every code review needs two approvals before merging.',
    'Two approvals are needed on a code review before merging.',
    'Before merging, code reviews need two approvals.',
    'Code reviews require two approvals before merging.',
    'Code reviews need two approvals before a merge.',
  ],
  [
    'The on-call engineer this week is Bo.',
    'Bo is the on-call engineer this week.',
    'This week the on-call engineer is Bo.',
    'The on-call engineer for this week is Bo.',
    'On call this week: Bo.',
    'Bo is on call this week.',
  ],
];
/** Distinct memories on the same topics: each says something the clusters do not. */
const DISTINCT = [
  'Remember to run the unit tests before deploying.',
  'Deploys happen on Tuesdays and Thursdays.',
  'The database migrations live in the sql folder.',
  'Rollbacks need the previous release tag.',
  'Ana drinks tea in the afternoon.',
  'Bo prefers oat milk in his coffee.',
  'Ana is allergic to peanuts.',
  'The production server is called zeus.',
  'The staging server runs PostgreSQL 15.',
  'The staging database is reset every night.',
  'The team decided to hire two more support engineers.',
  'The launch party is in the Lisbon office.',
  'Marketing needs the launch copy by February.',
  'Code reviews are assigned by the bot.',
  'Small documentation fixes need one approval.',
  'The on-call engineer next week is Rosa.',
  'The on-call rota lives in the wiki.',
  'Pages to the on-call engineer go through the phone app.',
];
const QUERIES = [
  'what must I do before deploying',
  'how does Ana take her coffee',
  'what is the staging server called',
  'when is the launch',
  'how many approvals does a code review need',
  'who is on call this week',
  'deploy checklist and servers',
  'what do we know about Ana and Bo',
];
const BUDGETS = [256, 1000, 4000];

const cosine = (a: number[], b: number[]) => {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) [ab, aa, bb] = [ab + a[i]! * b[i]!, aa + a[i]! * a[i]!, bb + b[i]! * b[i]!];
  return ab / Math.sqrt(aa * bb);
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

const config = loadConfig({ ...process.env, ORGMEM_DATA_DIR: 'memory://', ORGMEM_EMBEDDER: 'local', ORGMEM_RATE_LIMIT: 'false' });
const app = await createApp(config, { log: pino({ level: 'warn' }) });
const server = await buildServer(app);
await server.listen({ host: '127.0.0.1', port: 0 });
try {
  const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  const { api_key } = await createTenant(app, { name: 'bench-repeats', email: 'bench-repeats@bench.local', tier: 'enterprise', is_admin: false });
  const post = async (path: string, body: unknown) => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  // Cosines on the embedder the service uses: within a cluster, and between distinct things.
  const texts = [...CLUSTERS.flat(), ...DISTINCT];
  const group = (text: string) => {
    const c = CLUSTERS.findIndex((cluster) => cluster.includes(text));
    return c >= 0 ? `c${c}` : `d${DISTINCT.indexOf(text)}`;
  };
  const vectors = await app.embedder.embed(texts);
  const same: number[] = [];
  const different: number[] = [];
  for (let i = 0; i < texts.length; i++)
    for (let j = i + 1; j < texts.length; j++) {
      const c = cosine(vectors[i]!, vectors[j]!);
      (group(texts[i]!) === group(texts[j]!) ? same : different).push(c);
    }
  const closest = [...different].sort((a, b) => b - a).slice(0, 5);
  console.log(`${app.embedder.name}: ${same.length} pairs of near-copies, ${different.length} pairs of distinct memories`);
  console.log(
    `near-copies: min ${round(Math.min(...same), 3)}, p5 ${round(quantile(same, 0.05), 3)}, p10 ${round(quantile(same, 0.1), 3)}, median ${round(quantile(same, 0.5), 3)}`,
  );
  console.log(
    `distinct: max ${round(closest[0]!, 3)}, the five highest ${closest.map((c) => round(c, 3)).join(', ')}, p99 ${round(quantile(different, 0.99), 3)}`,
  );
  for (const t of [0.7, 0.75, 0.8, 0.85, 0.9]) {
    const caught = same.filter((c) => c >= t).length;
    const wrong = different.filter((c) => c >= t).length;
    console.log(`  threshold ${t}: near-copy pairs caught ${caught}/${same.length}, distinct pairs taken for copies ${wrong}`);
  }

  await post('/v1/memory/collections/repeats/memories/bulk', [
    ...CLUSTERS.flatMap((cluster) => cluster.map((text, i) => ({ text, ...(i % 3 === 0 ? { category: 'fact' } : {}) }))),
    ...DISTINCT.map((text, i) => ({ text, ...(i % 4 === 0 ? { category: 'fact' } : {}) })),
  ]);

  console.log('\n| max_tokens | blocks | memories shown (mean) | distinct things shown (mean) | repeats per block: mean | max | blocks over budget |');
  console.log('|---|---|---|---|---|---|---|');
  for (const max_tokens of BUDGETS) {
    let shown = 0;
    let distinct = 0;
    let worst = 0;
    let over = 0;
    for (const query of QUERIES) {
      const body = await post('/v1/memory/collections/repeats/context', { query, max_tokens, limit: 50 });
      const memories = [...body.stable.memories, ...body.query.memories] as Array<{ text: string }>;
      const things = new Set(memories.map((m) => group(m.text))).size;
      shown += memories.length;
      distinct += things;
      worst = Math.max(worst, memories.length - things);
      // Counted here again, on the text as received: the answer's own count is not taken on trust.
      if (countTokens(body.context, { disallowedSpecial: new Set() }) > max_tokens) over++;
    }
    const n = QUERIES.length;
    console.log(`| ${max_tokens} | ${n} | ${round(shown / n, 1)} | ${round(distinct / n, 1)} | ${round((shown - distinct) / n, 1)} | ${worst} | ${over} |`);
  }
} finally {
  await server.close();
  await closeApp(app);
}
