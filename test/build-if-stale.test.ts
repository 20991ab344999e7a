import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const script = join(root, 'scripts', 'build-if-stale.js');
const OUTPUTS = ['dist/cli.js', 'dist/trpc/router.d.ts', 'dist/web/index.html'];
const stamp = () => OUTPUTS.map((f) => statSync(join(root, f)).mtimeMs);

// npm runs it as `prepare`, also on the first `npx orgmem` in a checkout, while servers run from dist/.
describe('scripts/build-if-stale.js', () => {
  it('leaves an up-to-date build alone', () => {
    const built = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    const before = stamp();
    const again = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(again).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(stamp()).toEqual(before);
  });

  it('refuses a build it does not know, naming the ones it does', () => {
    const run = spawnSync(process.execPath, [script, 'build:js', 'build:docs'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('build-if-stale: no build named build:docs (known: build:js, build:types, build:web)\n');
  });
});
