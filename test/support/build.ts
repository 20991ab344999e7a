import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const SERVER = ['host', 'src', 'procedures', 'rest-adapter', 'trpc', 'mcp'];
const SOURCES = { 'build:js': SERVER, 'build:types': SERVER, 'build:web': ['web'] };
const CONFIG = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

type Script = keyof typeof SOURCES;

/** Newest change under a build's sources (directories too, so a deleted file counts). */
function sourcesChangedAt(script: Script) {
  let newest = Math.max(...CONFIG.map((f) => statSync(join(root, f)).mtimeMs));
  for (const dir of SOURCES[script]) {
    newest = Math.max(newest, statSync(join(root, dir)).mtimeMs);
    for (const entry of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })) {
      newest = Math.max(newest, statSync(join(root, dir, entry)).mtimeMs);
    }
  }
  return newest;
}

const builtAt = (output: string) => {
  try {
    return statSync(join(root, output)).mtimeMs;
  } catch {
    return -Infinity;
  }
};

/**
 * Runs the package script that writes `output` (a path under the project) when the sources are
 * newer than it, so tests that spawn `bin/orgmem.js` or compile against `orgmem/trpc` see the
 * code under test, not an older build. A failed build throws with what it printed.
 */
export function buildIfStale(script: Script, output: string) {
  if (builtAt(output) > sourcesChangedAt(script)) return;
  const started = new Date();
  const run = spawnSync('npm', ['run', '--silent', script], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm run ${script} failed:\n${run.stdout}${run.stderr}`);
  // Dated from when the build read the sources, so a source saved while it ran stays newer.
  utimesSync(join(root, output), started, started);
}
