import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEmbeddings, type FakeEmbeddings } from './fakes/embeddings-server.ts';
import { buildIfStale } from './support/build.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { lettaAgentFile, mem0Dump } from './support/import-samples.ts';
import { startServer, type TestServer } from './support/server.ts';

const bin = join(import.meta.dirname, '..', 'bin', 'orgmem.js');

/** Runs `orgmem import ...` to its end with only the variables given (and PATH). */
function orgmem(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('orgmem import FILE', () => {
  let server: TestServer;
  let dir: string;
  let t: Tenant;
  let env: Record<string, string>;
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const count = async () => (await t.api('GET', '/v1/memory/admin/stats')).body.memories as number;

  beforeAll(async () => {
    buildIfStale('build:js');
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
    dir = mkdtempSync(join(tmpdir(), 'orgmem-import-'));
    t = await newTenant(server.url, server.adminKey);
    env = { ORGMEM_URL: server.url, ORGMEM_API_KEY: t.key };
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('imports a detected file, lists the skipped records, and stores nothing twice when run again', async () => {
    const dump = file('mem0.json', mem0Dump());
    const first = await orgmem(['import', dump], env);
    expect(first.stderr).not.toMatch(/orgmem:/);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^imported 3 of 5 \(skipped 2, already imported 0\): import [0-9a-f-]{36}\n/);
    expect(first.stdout).toContain('  record 3: results.3.memory: ');
    expect(first.stdout).toContain('  record 4: results.4.created_at: not a date and time');
    expect(await count()).toBe(3);
    // The same command answers the same import (its key is made from the file and the options).
    const again = await orgmem(['import', dump], env);
    expect(again.stdout.split('\n')[0]).toBe(first.stdout.split('\n')[0]);
    // Other options make another import, which finds every record already there.
    const into = await orgmem(['import', dump, '--into', 'elsewhere'], env);
    expect(into.stdout).toMatch(/^imported 0 of 5 \(skipped 2, already imported 3\)/);
    expect(await count()).toBe(3);
  });

  it('passes the format and the Letta option on', async () => {
    const af = file('agent.af', lettaAgentFile());
    const res = await orgmem(['import', af, '--format', 'letta', '--include-messages'], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^imported 4 of 7 \(skipped 3, already imported 0\)/);
  });

  it('sends a file in parts of --part-records records, each its own import', async () => {
    const other = await newTenant(server.url, server.adminKey);
    const res = await orgmem(['import', file('parts.json', mem0Dump()), '--part-records', '2'], { ...env, ORGMEM_API_KEY: other.key });
    expect(res.code).toBe(0);
    const summaries = res.stdout.split('\n').filter((l) => !l.startsWith('  '));
    expect(summaries).toEqual([
      expect.stringMatching(/^part 1 of 3: imported 2 of 2 \(skipped 0, already imported 0\): import /),
      expect.stringMatching(/^part 2 of 3: imported 1 of 2 \(skipped 1, already imported 0\): import /),
      expect.stringMatching(/^part 3 of 3: imported 0 of 1 \(skipped 1, already imported 0\): import /),
      'in all: imported 3 of 5 (skipped 2, already imported 0)',
      '',
    ]);
    // Record numbers count within their part.
    expect(res.stdout).toContain('  record 1: results.1.memory: ');
    expect((await other.api('GET', '/v1/memory/admin/stats')).body.memories).toBe(3);
    const bad = await orgmem(['import', file('parts-bad.json', mem0Dump()), '--part-records', 'many'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--part-records must be a number of records from 1 to 999999, not 'many'/);
  });

  it('says what is wrong: arguments, the file, the key, the server', async () => {
    const none = await orgmem(['import'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^orgmem: 1 argument expected, 0 given\n\nUsage: orgmem import FILE/);
    const missing = await orgmem(['import', join(dir, 'nothing.json')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nothing\.json: no such file/);
    const notJson = await orgmem(['import', file('bad.json', '{"results": [')], env);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/bad\.json is not JSON/);
    const dump = file('mem0-again.json', mem0Dump());
    const noKey = await orgmem(['import', dump], { ORGMEM_URL: server.url });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/ORGMEM_API_KEY is not set/);
    const wrongKey = await orgmem(['import', dump], { ...env, ORGMEM_API_KEY: 'mv_wrong' });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/^orgmem: the server answered 401: /);
    const wrongFormat = await orgmem(['import', dump, '--format', 'zep'], env);
    expect(wrongFormat.code).toBe(1);
    expect(wrongFormat.stderr).toMatch(/the server answered 422: Invalid request: data: not a zep file/);
  });
});

describe('orgmem import on a slow embedder', () => {
  let embeddings: FakeEmbeddings;
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    buildIfStale('build:js');
    // 400 ms a step of 100 records: the 1,000 take 4 s, so the command reads the import's status while it runs.
    embeddings = await startFakeEmbeddings({ delayMs: 400 });
    server = await startServer({ ORGMEM_EMBEDDER: 'openai', ORGMEM_EMBEDDINGS_BASE_URL: embeddings.url, ORGMEM_EMBEDDINGS_DIMENSIONS: '64' });
    dir = mkdtempSync(join(tmpdir(), 'orgmem-import-'));
  });
  afterAll(async () => {
    await server?.close();
    await embeddings?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('waits for the import job, printing how far it got while it runs', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const path = join(dir, 'big.json');
    const results = Array.from({ length: 1000 }, (_, i) => ({ id: `big-${i}`, memory: `fact ${i}`, user_id: 'u', created_at: '2024-01-01T00:00:00Z' }));
    writeFileSync(path, JSON.stringify({ results }));
    const res = await orgmem(['import', path], { ORGMEM_URL: server.url, ORGMEM_API_KEY: t.key });
    expect(res.code).toBe(0);
    const lines = res.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(/^imported \d+ of 1000 \(skipped 0, already imported 0\)$/);
    // Counts only grow, and the last answer is the whole import.
    const counts = lines.map((l) => Number(/^imported (\d+)/.exec(l)![1]));
    expect([...counts].sort((a, b) => a - b)).toEqual(counts);
    expect(res.stdout).toMatch(/^imported 1000 of 1000 \(skipped 0, already imported 0\)/);
  });
});
