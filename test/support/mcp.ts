import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'orgmem.js');

export type ToolResult = { structuredContent?: Record<string, any>; isError?: boolean; content: Array<{ text?: string }> };

/** The same conversation over any transport: list tools, store, get, list collections, fail cleanly. */
export async function exercise(client: Client) {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  for (const name of ['get_memory', 'list_collections', 'store_memory', 'search', 'fetch']) expect(tools).toContain(name);
  const stored = (await client.callTool({
    name: 'store_memory',
    arguments: { collection: 'mcp', text: 'Remember: standup is at 9:30', category: 'fact' },
  })) as ToolResult;
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

/** Temporary directories made by a test file, removed after it. */
export function tempDirs() {
  const made: string[] = [];
  return {
    make(prefix = 'orgmem-mcp-') {
      const d = mkdtempSync(join(tmpdir(), prefix));
      made.push(d);
      return d;
    },
    removeAll() {
      for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/**
 * The environment an MCP host gives the command: this process's, without anything that picks
 * the data, the key or the server, so each test sets exactly the ones it means.
 */
export function hostEnv(env: Record<string, string>): Record<string, string> {
  const {
    ORGMEM_DATA_DIR: _d,
    XDG_DATA_HOME: _x,
    ORGMEM_MASTER_KEY: _k,
    ORGMEM_API_KEY: _a,
    ORGMEM_URL: _u,
    DATABASE_URL: _db,
    TEST_DATABASE_URL: _t,
    ...rest
  } = process.env as Record<string, string>;
  return { ...rest, ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'warn', ...env };
}

/** Spawns `command args` as an MCP host does, from `cwd`, and connects the SDK stdio client to it. */
export async function connectStdio(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr!.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'orgmem-tests', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/** `orgmem mcp` spawned from `cwd` with `env` (see hostEnv). */
export const spawnMcp = (env: Record<string, string>, cwd: string) => connectStdio(process.execPath, [BIN, 'mcp'], hostEnv(env), cwd);

/**
 * What a host sees of a process that cannot serve: the session opens with the problem as its
 * instructions, and listing tools (or anything else) is refused with the same text.
 */
export async function expectProblem(client: Client, problem: RegExp) {
  expect(client.getInstructions()).toMatch(problem);
  await expect(client.listTools()).rejects.toThrow(problem);
  await expect(client.callTool({ name: 'search_memory', arguments: { query: 'x' } })).rejects.toThrow(problem);
}
