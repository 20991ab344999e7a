import { spawnSync } from 'node:child_process';
import { rmSync, statSync, writeFileSync } from 'node:fs';
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

  // `--dry-run` runs the same lifecycle scripts (prepack, prepare) and lists what it would pack.
  it('is what `npm pack` builds with: the tarball holds dist/ as it was, which stays in place', () => {
    const built = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    // A file no build writes: packed only if no step before the packing deleted dist/.
    const probe = join(root, 'dist', 'pack-probe.txt');
    writeFileSync(probe, 'still here\n');
    try {
      const before = stamp();
      const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: root, encoding: 'utf8' });
      expect(pack.status, pack.stderr).toBe(0);
      // The listing follows what the scripts printed, if anything.
      const [{ files }] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m))) as [{ files: Array<{ path: string }> }];
      expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['dist/pack-probe.txt', ...OUTPUTS]));
      expect(stamp()).toEqual(before);
    } finally {
      rmSync(probe, { force: true });
    }
  });

  it('refuses a build it does not know, naming the ones it does', () => {
    const run = spawnSync(process.execPath, [script, 'build:js', 'build:docs'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('build-if-stale: no build named build:docs (known: build:js, build:types, build:web)\n');
  });
});
