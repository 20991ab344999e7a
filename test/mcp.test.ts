import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../src/services/access/tenants.ts';
import { call, newTenant, shared } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

const EXPECTED_TOOLS = ['get_memory', 'list_collections', 'store_memory'];

type ToolResult = { structuredContent?: Record<string, any>; isError?: boolean; content: Array<{ text?: string }> };

/** The same conversation over any transport: list tools, store, get, list collections, fail cleanly. */
async function exercise(client: Client) {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  for (const name of EXPECTED_TOOLS) expect(tools).toContain(name);
  const stored = (await client.callTool({ name: 'store_memory', arguments: { collection: 'mcp', text: 'Remember: standup is at 9:30', category: 'fact' } })) as ToolResult;
  expect(stored.isError).toBeFalsy();
  const id = stored.structuredContent!.id as string;
  expect(stored.structuredContent).toMatchObject({ collection: 'mcp', category: 'fact' });
  const got = (await client.callTool({ name: 'get_memory', arguments: { collection: 'mcp', id } })) as ToolResult;
  expect(got.structuredContent).toMatchObject({ id, text: 'Remember: standup is at 9:30' });
  const listed = (await client.callTool({ name: 'list_collections', arguments: {} })) as ToolResult;
  expect(listed.structuredContent!.items).toEqual([expect.objectContaining({ name: 'mcp', memory_count: 1 })]);
  const missing = (await client.callTool({ name: 'get_memory', arguments: { collection: 'mcp', id: 'nope' } })) as ToolResult;
  expect(missing.isError).toBe(true);
  expect(missing.content[0]!.text).toMatch(/^404/);
  return id;
}

describe('MCP over Streamable HTTP at /v1/mcp', () => {
  const { url, adminKey } = shared();

  it('lists tools, stores then gets a memory with the SDK client', async () => {
    const t = await newTenant(url, adminKey);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.key}` } } }));
    const id = await exercise(client);
    await client.close();
    // Stored through MCP means stored for REST too, attributed to the key.
    const rest = await t.api('GET', `/v1/memory/collections/mcp/memories/${id}`);
    expect(rest.body.created_by.label).toBe('default');
  });

  it('refuses a missing or bad key with 401 before speaking MCP', async () => {
    const res = await call(url, 'POST', '/v1/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('GET and DELETE are 405: the endpoint is stateless and keeps no stream open', async () => {
    const t = await newTenant(url, adminKey);
    for (const method of ['GET', 'DELETE']) {
      const res = await call(url, method, '/v1/mcp', { key: t.key });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('a read-only key cannot store', async () => {
    const t = await newTenant(url, adminKey);
    const reader = await t.newKey('reader', true);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${reader.key}` } } }));
    const res = (await client.callTool({ name: 'store_memory', arguments: { collection: 'mcp', text: 'x' } })) as ToolResult;
    expect(res.isError).toBe(true);
    expect(res.content[0]!.text).toMatch(/^403/);
    await client.close();
  });
});

describe('MCP over stdio (`orgmem mcp`)', () => {
  const bin = join(import.meta.dirname, '..', 'bin', 'orgmem.js');
  let env: Record<string, string>;
  let server: TestServer | undefined;
  let dir: string | undefined;
  const cleanup: string[] = [];

  beforeAll(async () => {
    const base = { ...process.env, ORGMEM_LOG_LEVEL: 'warn' } as Record<string, string>;
    if (process.env.TEST_DATABASE_URL) {
      // PostgreSQL: the stdio process shares a database with a server, as in production.
      server = await startServer({}, { worker: false });
      const { api_key } = await createTenant(server.app, { name: 'stdio', email: 'stdio@test.local' });
      env = { ...base, DATABASE_URL: server.app.config.databaseUrl!, ORGMEM_API_KEY: api_key };
    } else {
      // Embedded: a data directory of its own, with a tenant made by the CLI.
      dir = mkdtempSync(join(tmpdir(), 'orgmem-stdio-'));
      const out = execFileSync(process.execPath, [bin, 'admin', 'create-tenant', '--name', 'stdio', '--email', 'stdio@test.local'], {
        timeout: 120_000,
        env: { ...base, ORGMEM_DATA_DIR: dir },
        encoding: 'utf8',
      });
      const key = /(mv_[A-Za-z0-9_-]{43})/.exec(out)![1]!;
      env = { ...base, ORGMEM_DATA_DIR: dir, ORGMEM_API_KEY: key };
    }
    delete env.TEST_DATABASE_URL;
  });

  afterAll(async () => {
    await server?.close();
    for (const d of [dir, ...cleanup]) if (d) rmSync(d, { recursive: true, force: true });
  });

  // Spawned processes load the model and (embedded) PGlite: seconds each, more on a busy machine.
  it('lists tools, stores then gets a memory through a spawned process', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'], env, stderr: 'pipe' }));
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('exits with a clear message when the key is wrong', () => {
    // Embedded, a data directory of its own, so no other process can hold it.
    const own = dir ? { ORGMEM_DATA_DIR: mkdtempSync(join(tmpdir(), 'orgmem-stdio-')) } : {};
    if (own.ORGMEM_DATA_DIR) cleanup.push(own.ORGMEM_DATA_DIR);
    let message = '';
    try {
      execFileSync(process.execPath, [bin, 'mcp'], { env: { ...env, ...own, ORGMEM_API_KEY: 'mv_wrong' }, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      message = String((err as { stderr: string }).stderr);
    }
    expect(message).toMatch(/Invalid or revoked API key/);
  }, 120_000);
});
