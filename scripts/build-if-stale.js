#!/usr/bin/env node
// Runs each named build script of package.json (all three when none is named) whose output is
// older than its sources, and leaves an up-to-date build alone. npm runs it as `prepare` after
// every `npm ci`, on the first `npx orgmem` in a checkout and before `npm pack` and `npm publish`
// pack `dist/`, and `npm start` runs it too: a full `npm run build` there would delete `dist/`
// under a server or command already running from it.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const SERVER = ['host', 'src', 'procedures', 'rest-adapter', 'trpc', 'mcp'];
const CONFIG = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];
/** Each build script: the file it writes last, and the directories it reads. */
const BUILDS = {
  'build:js': { output: 'dist/cli.js', sources: [...SERVER, 'plugins'] },
  'build:types': { output: 'dist/trpc/router.d.ts', sources: SERVER },
  'build:web': { output: 'dist/web/index.html', sources: ['web'] },
};

/** Newest change under a build's sources (directories too, so a deleted file counts). */
function sourcesChangedAt(sources) {
  let newest = Math.max(...CONFIG.map((f) => statSync(join(root, f)).mtimeMs));
  for (const dir of sources) {
    newest = Math.max(newest, statSync(join(root, dir)).mtimeMs);
    for (const entry of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })) {
      newest = Math.max(newest, statSync(join(root, dir, entry)).mtimeMs);
    }
  }
  return newest;
}

function builtAt(output) {
  try {
    return statSync(join(root, output)).mtimeMs;
  } catch {
    return -Infinity;
  }
}

/** Runs `script` when its sources are newer than its output; a failed build throws with what it printed. */
function buildIfStale(script) {
  const { output, sources } = BUILDS[script];
  if (builtAt(output) > sourcesChangedAt(sources)) return;
  const started = new Date();
  const run = spawnSync('npm', ['run', '--silent', script], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm run ${script} failed:\n${run.stdout}${run.stderr}`);
  // Dated from when the build read the sources, so a source saved while it ran stays newer.
  utimesSync(join(root, output), started, started);
}

const scripts = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(BUILDS);
const unknown = scripts.filter((s) => !(s in BUILDS));
if (unknown.length > 0) {
  process.stderr.write(`build-if-stale: no build named ${unknown.join(', ')} (known: ${Object.keys(BUILDS).join(', ')})\n`);
  process.exit(2);
}
try {
  for (const script of scripts) buildIfStale(script);
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
