import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildIfStale } from './build.ts';

const root = join(import.meta.dirname, '..', '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** Links packages of this checkout's node_modules into the project's, so tests need no network for them. */
function link(dir: string, packages: string[]) {
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  for (const pkg of packages) symlinkSync(join(root, 'node_modules', pkg), join(dir, 'node_modules', pkg));
}

function write(dir: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** A project in a temporary directory, with what tests do to it. */
function project(dir: string) {
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
  link(dir, ['@trpc', 'openai', join('@types', 'node')]);
  symlinkSync(root, join(dir, 'node_modules', 'orgmem'));
  write(dir, files);
  return project(dir);
}

/** Bytes of the files under `path`, links not followed. */
function bytesUnder(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + bytesUnder(join(path, entry)), 0);
}

/**
 * A fresh app that installs `tarball` (what `npm pack` made) as a user installs a package: npm
 * fetches its dependencies from its cache, or the registry when they are not there. Strict
 * TypeScript with NodeNext modules; `files` are added. `installed` is what the install put in
 * node_modules, with each package's size in bytes; @trpc/client, openai and @types/node are then
 * linked from this checkout for code that uses them.
 */
export function packageProject(tarball: string, files: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-package-'));
  write(dir, {
    'package.json': JSON.stringify({ name: 'orgmem-package-app', private: true, type: 'module', dependencies: { '@orgmem/client': `file:${tarball}` } }),
    'tsconfig.json': JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], rootDir: 'src', outDir: 'dist' },
    }),
  });
  const npm = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, encoding: 'utf8' });
  if (npm.status !== 0) throw new Error(`npm install failed:\n${npm.stdout}${npm.stderr}`);
  const modules = join(dir, 'node_modules');
  const installed = Object.fromEntries(
    readdirSync(modules)
      .filter((name) => !name.startsWith('.'))
      .flatMap((name) => (name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => `${name}/${sub}`) : [name]))
      .map((name) => [name, bytesUnder(join(modules, name))]),
  );
  link(dir, ['@trpc', 'openai', join('@types', 'node')]);
  write(dir, files);
  return { ...project(dir), installed };
}
