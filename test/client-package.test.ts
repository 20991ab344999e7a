import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { packageProject } from './support/client-project.ts';
import { allBlocks } from './support/docs.ts';

const root = join(import.meta.dirname, '..');
const pkg = join(root, 'clients', 'typescript');
const MB = 1024 * 1024;

/** The ```ts blocks of the package's README, each by the name of its `<!-- snippet: name -->` marker. */
function readmeSnippets(): Record<string, string> {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  return Object.fromEntries([...readme.matchAll(/^<!-- snippet: ([a-z-]+) -->\n```ts\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]));
}

// The README's snippets, and docs/client.md's TypeScript (marked not-run there: the docs'
// snippet project has this checkout, not the package), one file each.
const SNIPPETS = {
  ...readmeSnippets(),
  ...Object.fromEntries(
    allBlocks()
      .filter((b) => b.page === 'docs/client.md' && b.lang === 'ts')
      .map((b, i) => [`docs-client-${i + 1}`, b.code]),
  ),
};

let packDir: string;
let app: ReturnType<typeof packageProject>;
let tenant: Tenant;

beforeAll(async () => {
  packDir = mkdtempSync(join(tmpdir(), 'orgmem-pack-'));
  // `npm pack` runs the package's prepack: the types generated from openapi.json and the router, then tsc.
  const pack = spawnSync('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], { cwd: pkg, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stdout}${pack.stderr}`);
  const tarball = join(packDir, pack.stdout.trim().split('\n').pop()!);
  app = packageProject(tarball, Object.fromEntries(Object.entries(SNIPPETS).map(([name, code]) => [`src/${name}.ts`, code])));
  tenant = await newTenant(shared().url, shared().adminKey);
}, 180_000);

afterAll(() => {
  app?.remove();
  if (packDir) rmSync(packDir, { recursive: true, force: true });
});

/** A compiled snippet run with the server's address and the tenant's key. */
function runSnippet(name: string) {
  const run = spawnSync(process.execPath, [join(app.dir, 'dist', `${name}.js`)], {
    env: { ...process.env, ORGMEM_URL: shared().url, ORGMEM_API_KEY: tenant.key },
    encoding: 'utf8',
  });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout;
}

describe('@orgmem/client (clients/typescript)', () => {
  it('is generated from the OpenAPI document the server serves', async () => {
    const served = await (await fetch(`${shared().url}/openapi.json`)).json();
    // On a difference: `npm run openapi` in clients/typescript writes the served document.
    expect(readFileSync(join(pkg, 'openapi.json'), 'utf8')).toBe(`${JSON.stringify(served, null, 2)}\n`);
  });

  it('installs only itself and openapi-fetch, under 1 MB together, with no server code', () => {
    expect(Object.keys(app.installed).sort()).toEqual(['@orgmem/client', 'openapi-fetch', 'openapi-typescript-helpers']);
    const total = Object.values(app.installed).reduce((a, b) => a + b, 0);
    expect(total, JSON.stringify(app.installed)).toBeLessThan(MB);
    expect(
      readdirSync(join(app.dir, 'node_modules', '@orgmem', 'client', 'dist'))
        .filter((f) => f.endsWith('.d.ts'))
        .sort(),
    ).toEqual(['client.d.ts', 'error.d.ts', 'index.d.ts', 'mcp.d.ts', 'proxy.d.ts', 'schema.d.ts', 'trpc.d.ts']);
  });

  it('compiles the snippets of its README and docs/client.md under strict NodeNext, its declarations checked too', () => {
    expect(Object.keys(SNIPPETS).sort()).toEqual(['docs-client-1', 'errors', 'mcp', 'proxy', 'quickstart', 'trpc']);
    const run = app.compile('--skipLibCheck', 'false');
    expect(run.output).toBe('');
    expect(run.status).toBe(0);
  }, 120_000);

  it('creates a collection, stores a memory, finds it, and gets a refused call as an OrgmemError (quickstart)', async () => {
    const out = runSnippet('quickstart');
    const stored = /^stored (\S+): Ana prefers oat milk$/m.exec(out);
    expect(stored, out).not.toBeNull();
    expect(out).toMatch(new RegExp(`^found ${stored![1]} \\(\\d\\.\\d\\d\\): Ana prefers oat milk$`, 'm'));
    expect(out).toMatch(/^refused 409: \S.*$/m);
    const listed = await tenant.api('GET', '/v1/memory/collections/notes/memories');
    expect(listed.body.map((m: { id: string }) => m.id)).toEqual([stored![1]]);
  });

  it('reads the same collection through openapi-fetch’s typed error, tRPC and docs/client.md’s snippet', () => {
    expect(runSnippet('errors')).toBe('notes: 1 memories\n');
    expect(runSnippet('trpc')).toBe('notes: 1 memories\n');
    expect(runSnippet('docs-client-1')).toBe('notes: 1 memories\n');
  });

  it('gives an MCP endpoint and header that the server answers', async () => {
    const { url, headers } = JSON.parse(runSnippet('mcp')).mcpServers.orgmem;
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: { tools: Array<{ name: string }> } };
    expect(result.tools.map((t) => t.name)).toContain('search_memory');
  });
});
