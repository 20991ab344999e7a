/**
 * CLI start time: wall time from spawning the process to its exit, for help that loads the CLI
 * and runs nothing.
 *
 *   npm run build:js && npx tsx bench/cli-start.ts [--n 10] [--bin bin/orgmem.js]
 *
 * Two ways of starting are timed, each over N runs (min / median by nearest rank / max, in ms):
 * the entry point (`node bin/orgmem.js`, which runs the JavaScript in dist/), and the TypeScript
 * sources through tsx (`node --import tsx host/cli.ts`), which is how bin/orgmem.js started before
 * the build existed. `--bin` times another entry point (an older checkout's, to compare). Every
 * run gets an empty temporary data directory and no database URL, so a command that does run
 * something touches nothing real.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { percentile } from './lib/stats.ts';

const { values } = parseArgs({ options: { n: { type: 'string', default: '10' }, bin: { type: 'string', default: 'bin/orgmem.js' } } });
const N = Number(values.n);
const root = resolve(import.meta.dirname, '..');

// Resolved here: the runs start in an empty directory, where `--import tsx` would not be found.
const starts = { [values.bin!]: [resolve(values.bin!)], 'tsx host/cli.ts': ['--import', import.meta.resolve('tsx'), join(root, 'host/cli.ts')] };
const commands = [['--help'], ['serve', '--help'], ['admin', 'create-tenant', '--help']];

function timeOnce(prefix: string[], args: string[]) {
  const dataDir = mkdtempSync(join(tmpdir(), 'orgmem-cli-start-'));
  const started = performance.now();
  const run = spawnSync(process.execPath, [...prefix, ...args], {
    cwd: dataDir,
    env: { ...process.env, ORGMEM_DATA_DIR: dataDir, DATABASE_URL: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const ms = performance.now() - started;
  rmSync(dataDir, { recursive: true, force: true });
  return { ms, status: run.status, out: `${run.stdout}${run.stderr}`.trim().split('\n')[0] ?? '' };
}

const fmt = (ms: number) => ms.toFixed(0).padStart(6);
process.stdout.write(`node ${process.version}, ${N} runs each; wall ms from spawn to exit\n\n`);
process.stdout.write(
  `${'start'.padEnd(24)} ${'command'.padEnd(28)} ${'min'.padStart(6)} ${'median'.padStart(6)} ${'max'.padStart(6)}  exit  first line of output\n`,
);
for (const [name, prefix] of Object.entries(starts)) {
  for (const args of commands) {
    const runs = Array.from({ length: N }, () => timeOnce(prefix, args));
    const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
    const { status, out } = runs[0]!;
    process.stdout.write(
      `${name.padEnd(24)} ${args.join(' ').padEnd(28)} ${fmt(ms[0]!)} ${fmt(percentile(ms, 50))} ${fmt(ms.at(-1)!)}  ${String(status).padStart(4)}  ${out.slice(0, 60)}\n`,
    );
  }
}
