/**
 * MCP stdio time-to-first-tool: from spawning `orgmem mcp` to the first successful tool call,
 * as an MCP host (Claude Desktop, an IDE) sees it.
 *
 *   npx tsx bench/mcp-start.ts [--n 5] [--mode local|remote|both]
 *
 * local: the process opens an embedded data directory of its own (made here, with a tenant).
 * remote: the process bridges to a server started here (ORGMEM_URL + ORGMEM_API_KEY).
 * Each run spawns `node bin/orgmem.js mcp` from a temporary directory with the official SDK
 * stdio client, connects, calls list_collections and stops the process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pino } from 'pino';
import { closeApp, createApp } from '../host/app.ts';
import { loadConfig } from '../src/core/config.ts';
import { createTenant } from '../src/services/access/tenants.ts';
import { buildIfStale } from '../test/support/build.ts';
import { startServer } from '../test/support/server.ts';
import { percentile, round } from './lib/stats.ts';

const { values } = parseArgs({ options: { n: { type: 'string', default: '5' }, mode: { type: 'string', default: 'both' } } });
const N = Number(values.n);
const BIN = fileURLToPath(new URL('../bin/orgmem.js', import.meta.url));
// bin/orgmem.js runs the compiled CLI: measure the sources as they are.
buildIfStale('build:js');
const base = { ...process.env, ORGMEM_LOG_LEVEL: 'warn' } as Record<string, string>;
delete base.DATABASE_URL;
delete base.ORGMEM_URL;

async function timeToFirstTool(env: Record<string, string>): Promise<number> {
  const cwd = mkdtempSync(join(tmpdir(), 'orgmem-bench-cwd-'));
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const start = performance.now();
  try {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env, cwd, stderr: 'ignore' }));
    const result = await client.callTool({ name: 'list_collections', arguments: {} });
    if (result.isError) throw new Error(`list_collections failed: ${JSON.stringify(result.content)}`);
    return performance.now() - start;
  } finally {
    await client.close();
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function measure(label: string, env: Record<string, string>) {
  const ms: number[] = [];
  for (let i = 0; i < N; i++) ms.push(await timeToFirstTool(env));
  const fmt = (x: number) => `${round(x, 0)} ms`;
  process.stdout.write(`${label.padEnd(7)} n=${N}  min ${fmt(Math.min(...ms))}  median ${fmt(percentile(ms, 50))}  max ${fmt(Math.max(...ms))}\n`);
}

if (values.mode === 'local' || values.mode === 'both') {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-bench-data-'));
  try {
    const app = await createApp(loadConfig({ ...base, ORGMEM_DATA_DIR: dir }), { log: pino({ level: 'warn' }) });
    const { api_key } = await createTenant(app, { name: 'bench', email: 'bench@test.local' });
    await closeApp(app);
    await measure('local', { ...base, ORGMEM_DATA_DIR: dir, ORGMEM_API_KEY: api_key });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.mode === 'remote' || values.mode === 'both') {
  const server = await startServer({}, { worker: false });
  try {
    const { api_key } = await createTenant(server.app, { name: 'bench', email: 'bench@test.local' });
    await measure('remote', { ...base, ORGMEM_URL: server.url, ORGMEM_API_KEY: api_key });
  } finally {
    await server.close();
  }
}
