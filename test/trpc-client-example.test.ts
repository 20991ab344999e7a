import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './support/build.ts';
import { newTenant, shared } from './support/client.ts';

const root = join(import.meta.dirname, '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * examples/trpc-client as a user has it after `npm install`: orgmem (this checkout, as its
 * package.json `exports` present it) and @trpc/client in its node_modules, linked rather than
 * installed so the test needs no network.
 */
function exampleApp() {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-trpc-example-'));
  cpSync(join(root, 'examples', 'trpc-client'), dir, { recursive: true, filter: (src) => !/\/(node_modules|dist)(\/|$)/.test(src.slice(root.length)) });
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(root, join(dir, 'node_modules', 'orgmem'));
  symlinkSync(join(root, 'node_modules', '@trpc'), join(dir, 'node_modules', '@trpc'));
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'));
  // Would compile without complaint if AppRouter degraded to `any` somewhere: each line must be an error.
  writeFileSync(
    join(dir, 'src', 'typed.ts'),
    `import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from 'orgmem/trpc';
const orgmem = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: 'http://127.0.0.1:1/trpc' })] });
export async function wrong(): Promise<string> {
  // @ts-expect-error text is required
  await orgmem.memories.create.mutate({ collection: 'c' });
  // @ts-expect-error memories.list needs its collection
  await orgmem.memories.list.query();
  // @ts-expect-error no such procedure
  await orgmem.memories.nope.query();
  const [first] = await orgmem.collections.list.query();
  // @ts-expect-error memory_count is a number
  return first?.memory_count ?? '';
}
`,
  );
  return dir;
}

describe('examples/trpc-client', () => {
  let dir: string;
  beforeAll(() => {
    buildIfStale('build:types', 'dist/trpc/router.d.ts');
    dir = exampleApp();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles under its `tsc --init` defaults, also checking every declaration file (orgmem’s too)', () => {
    // One run stands for both projects the package must serve: skipLibCheck false and the older
    // ES2022 lib only add errors to the `tsc --init` defaults, and those are stricter than `strict`.
    const run = spawnSync(process.execPath, [tsc, '-p', dir, '--skipLibCheck', 'false', '--target', 'es2022'], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('stores and lists memories on a live server', async () => {
    const { url, adminKey } = shared();
    const t = await newTenant(url, adminKey);
    const run = spawnSync(process.execPath, [join(dir, 'dist', 'main.js')], {
      env: { ...process.env, ORGMEM_URL: url, ORGMEM_API_KEY: t.key },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const stored = [...run.stdout.matchAll(/^stored (\S+) in example: (.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(stored.map(([, text]) => text)).toEqual(['Ana prefers oat milk', 'Ben is allergic to peanuts']);
    const listed = [...run.stdout.matchAll(/^listed (\S+): (.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(listed.sort()).toEqual(stored.sort());
    expect(run.stdout).toMatch(/^collection example: 2 memories$/m);
    // What the example printed is what the server holds.
    const rest = await t.api('GET', '/v1/memory/collections/example/memories');
    expect(rest.body.map((m: { id: string }) => m.id).sort()).toEqual(stored.map(([id]) => id).sort());
  });
});
