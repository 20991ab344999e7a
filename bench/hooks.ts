/**
 * The hooks' budgets (docs/hooks.md): how long `orgmem hook` takes to start, and the wall time of
 * a UserPromptSubmit hook from spawn to exit against a running server.
 *
 *   npm run build:js && npx tsx bench/hooks.ts [--n 40] [--memories 500] [--embedder local|hash]
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/orgmem_test npx tsx bench/hooks.ts
 *
 * Start-up: `node -e 0` (Node alone), `orgmem --help`, and `orgmem hook UserPromptSubmit` without
 * a server (reads stdin, loads the hook client, says what is missing, exits), and the same with the
 * Claude Code plugin's hook script, which the plugin runs instead of `orgmem`. Prompt: a real
 * server (the embedded default: PGlite and the bundled embedder; or a fresh PostgreSQL database
 * with TEST_DATABASE_URL) holding `--memories` memories in the project's collection (a third of
 * them facts, the rest episodes and notes, so that the search part has work); each run spawns
 * the hook with a different prompt on stdin and times it to its exit, and the context request
 * alone is timed in this process for comparison. `injected` counts the runs that answered a block
 * (the others hit the 800 ms budget or found nothing). SessionStart (profile and stable part, 3 s
 * budget) is timed the same way, with the largest answer's size.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { newTenant } from '../test/support/client.ts';
import { startServer } from '../test/support/server.ts';
import { percentile } from './lib/stats.ts';

const { values } = parseArgs({
  options: { n: { type: 'string', default: '40' }, memories: { type: 'string', default: '500' }, embedder: { type: 'string', default: 'local' } },
});
const N = Number(values.n);
const MEMORIES = Number(values.memories);
const bin = resolve(import.meta.dirname, '..', 'bin', 'orgmem.js');
/** What the Claude Code plugin's hooks run (plugins/claude-code/hooks/hooks.json): the same hook without the CLI. */
const pluginHook = resolve(import.meta.dirname, '..', 'plugins', 'claude-code', 'scripts', 'orgmem-hook.mjs');
const cwd = mkdtempSync(join(tmpdir(), 'orgmem-bench-hooks-'));
const COLLECTION = 'bench-project';

const TOPICS = ['the billing service', 'the deploy pipeline', 'the search index', 'the mobile app', 'the data warehouse', 'the auth gateway'];
const text = (i: number) => {
  const topic = TOPICS[i % TOPICS.length]!;
  if (i % 3 === 0) return { text: `${topic} runs on version ${i % 17} and is owned by team ${i % 5}.`, category: 'fact' };
  if (i % 3 === 1) return { text: `On day ${i} we changed ${topic}: step ${i % 11} now retries ${i % 4} times.`, category: 'episode' };
  return { text: `Note ${i}: ${topic} logs go to bucket ${i % 13}; alerts page the ${i % 2 ? 'day' : 'night'} rota.`, category: 'other' };
};
const prompt = (i: number) => `How does ${TOPICS[i % TOPICS.length]} handle step ${i % 11} retries, and who owns it?`;

/** Spawns node with `args` and `input` on stdin; the wall time to its exit. Not spawnSync: the server under test runs in this process. */
function timed(args: string[], input: string, env: Record<string, string>): Promise<{ ms: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env } });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.resume();
  child.stdin.end(input);
  return new Promise((done) => child.on('close', () => done({ ms: performance.now() - started, stdout })));
}

async function times(n: number, run: (i: number) => Promise<{ ms: number; stdout: string }>) {
  const out: { ms: number; stdout: string }[] = [];
  for (let i = 0; i < n; i++) out.push(await run(i));
  return out;
}
const ms = (runs: { ms: number }[]) => runs.map((r) => r.ms);

const line = (name: string, xs: number[], extra = '') =>
  process.stdout.write(
    `${name.padEnd(44)} p50 ${percentile(xs, 50).toFixed(0).padStart(5)}  p95 ${percentile(xs, 95).toFixed(0).padStart(5)}  max ${Math.max(...xs)
      .toFixed(0)
      .padStart(5)} ms${extra}\n`,
  );

process.stdout.write(`node ${process.version}, ${N} runs each\n\n`);
const payload = (i: number) =>
  JSON.stringify({ session_id: 'bench', transcript_path: join(cwd, 't.jsonl'), cwd, hook_event_name: 'UserPromptSubmit', prompt: prompt(i) });

line('node -e 0', ms(await times(N, () => timed(['-e', '0'], '', {}))));
line('orgmem --help', ms(await times(N, () => timed([bin, '--help'], '', {}))));
line('orgmem hook UserPromptSubmit (no server set)', ms(await times(N, (i) => timed([bin, 'hook', 'UserPromptSubmit'], payload(i), {}))));
line("the plugin's hook script, the same", ms(await times(N, (i) => timed([pluginHook, 'UserPromptSubmit'], payload(i), {}))));

const server = await startServer({ ORGMEM_EMBEDDER: values.embedder! });
try {
  const t = await newTenant(server.url, server.adminKey);
  for (let i = 0; i < MEMORIES; i += 100) {
    const batch = Array.from({ length: Math.min(100, MEMORIES - i) }, (_, k) => text(i + k));
    const res = await t.api('POST', `/v1/memory/collections/${COLLECTION}/memories/bulk`, batch);
    if (res.status !== 201 && res.status !== 200) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const env = { ORGMEM_URL: server.url, ORGMEM_API_KEY: t.key, ORGMEM_COLLECTION: COLLECTION };
  // Warm: the embedder's first call loads its model.
  await times(3, (i) => timed([bin, 'hook', 'UserPromptSubmit'], payload(i), env));

  const direct: number[] = [];
  for (let i = 0; i < N; i++) {
    const started = performance.now();
    await t.api('POST', `/v1/memory/collections/${COLLECTION}/context`, { query: prompt(i), max_tokens: 1600, limit: 10 });
    direct.push(performance.now() - started);
  }
  const runs = await times(N, (i) => timed([bin, 'hook', 'UserPromptSubmit'], payload(i), env));
  const pluginRuns = await times(N, (i) => timed([pluginHook, 'UserPromptSubmit'], payload(i), env));
  const starts = await times(N, () =>
    timed([bin, 'hook', 'SessionStart'], JSON.stringify({ session_id: 'bench', cwd, hook_event_name: 'SessionStart', source: 'startup' }), env),
  );
  const db = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'embedded';
  process.stdout.write(`\n${db}, embedder ${values.embedder}, ${MEMORIES} memories in the collection\n`);
  line('POST C/context (in process, over HTTP)', direct);
  const injected = (rs: { stdout: string }[]) => `  injected ${rs.filter((r) => r.stdout.includes('additionalContext')).length}/${N}`;
  line('orgmem hook UserPromptSubmit, spawn to exit', ms(runs), injected(runs));
  line("the plugin's hook script, UserPromptSubmit", ms(pluginRuns), injected(pluginRuns));
  line('orgmem hook SessionStart, spawn to exit', ms(starts), `${injected(starts)}, at most ${Math.max(...starts.map((r) => r.stdout.length))} bytes`);
} finally {
  await server.close();
  rmSync(cwd, { recursive: true, force: true });
}
