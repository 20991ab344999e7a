import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/**
 * Rebuilds what `script` writes when the sources are newer than it (scripts/build-if-stale.js,
 * the same step as npm's `prepare`), so tests that spawn `bin/orgmem.js` or compile against
 * `orgmem/trpc` see the code under test, not an older build. A failed build throws with what it printed.
 */
export function buildIfStale(script: 'build:js' | 'build:types' | 'build:web') {
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-stale.js'), script], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${script} failed:\n${run.stdout}${run.stderr}`);
}
