import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildIfStale } from './build.ts';

const root = join(import.meta.dirname, '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * examples/trpc-client as a user has it after `npm install`, with `files` (paths inside the
 * project) added: orgmem (this checkout, as its package.json `exports` present it), @trpc/client
 * and openai in its node_modules, linked rather than installed so tests need no network. Its
 * tsconfig is what `tsc --init` writes. The declarations of `orgmem/trpc` are rebuilt first when
 * the sources are newer.
 */
export function clientProject(files: Record<string, string> = {}) {
  buildIfStale('build:types');
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-client-'));
  cpSync(join(root, 'examples', 'trpc-client'), dir, { recursive: true, filter: (src) => !/\/(node_modules|dist)(\/|$)/.test(src.slice(root.length)) });
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(root, join(dir, 'node_modules', 'orgmem'));
  for (const pkg of ['@trpc', 'openai', join('@types', 'node')]) symlinkSync(join(root, 'node_modules', pkg), join(dir, 'node_modules', pkg));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return {
    dir,
    /** `tsc -p` on the project with extra options; what it printed, '' when it compiled cleanly. */
    compile(...args: string[]) {
      const run = spawnSync(process.execPath, [tsc, '-p', dir, ...args], { encoding: 'utf8' });
      return { status: run.status, output: run.stdout + run.stderr };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
