import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeApp, createApp } from '../host/app.ts';
import { loadConfig } from '../src/core/config.ts';
import { createTenant } from '../src/services/access/tenants.ts';
import { newTenant, shared } from './support/client.ts';
import { markedBlock } from './support/docs.ts';
import { connectStdio, hostEnv, ROOT, tempDirs, type ToolResult } from './support/mcp.ts';

/**
 * The MCP configs of the README and docs/mcp.md, as a newcomer pastes them: each block marked
 * `<!-- mcp-config: NAME -->` is read, its placeholders filled in (the project directory, a key,
 * the server's address, a data directory), and exactly its command is spawned from a working
 * directory of its own (or its URL and headers used) with the official SDK client.
 * test/docs-snippets.test.ts checks that every marked config is one this file runs.
 */
const dirs = tempDirs();
afterAll(() => dirs.removeAll());

const config = (name: string) => markedBlock('mcp-config', name).code;

const fill = (text: string, key: string, url = 'http://127.0.0.1:8080', dataDir = '/srv/orgmem') =>
  text
    .replaceAll('/path/to/orgmem', ROOT)
    .replaceAll('mv_...', key)
    .replaceAll('$KEY', key)
    .replaceAll('http://127.0.0.1:8080', url)
    .replaceAll('/srv/orgmem', dataDir);

interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** A JSON config (Claude Desktop, Cursor): its `mcpServers.orgmem` entry. */
const fromJson = (text: string) =>
  (JSON.parse(text) as { mcpServers: { orgmem: Launch & { url?: string; headers?: Record<string, string> } } }).mcpServers.orgmem;

/** `claude mcp add ...` as Claude Code reads it: options, the name, then the command (after `--`) or URL. */
function fromClaudeAdd(line: string) {
  const words = [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  expect(words.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positional: string[] = [];
  let transport = 'stdio';
  for (let i = 3; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') {
      positional.push(...words.slice(i + 1));
      break;
    }
    if (word === '--transport' || word === '--scope') {
      if (word === '--transport') transport = words[i + 1]!;
      i++;
    } else if (word === '--env' || word === '--header') {
      // Variadic, as in Claude Code: values until the next option.
      while (words[i + 1] && !words[i + 1]!.startsWith('-')) {
        const value = words[++i]!;
        if (word === '--env') env[value.slice(0, value.indexOf('='))] = value.slice(value.indexOf('=') + 1);
        else headers[value.slice(0, value.indexOf(':')).toLowerCase()] = value.slice(value.indexOf(':') + 1).trim();
      }
    } else if (word.startsWith('-')) throw new Error(`unknown option in the docs' claude mcp add: ${word}`);
    else positional.push(word);
  }
  const [name, commandOrUrl, ...args] = positional;
  expect(name).toBe('orgmem');
  return { transport, command: commandOrUrl!, args, env, headers };
}

/** One tool call that writes and one that reads: the config reaches a working orgmem as the key's tenant. */
async function useTools(client: Client) {
  const stored = (await client.callTool({ name: 'store_memory', arguments: { collection: 'readme', text: 'Pasted from the README' } })) as ToolResult;
  expect(stored.isError, stored.content[0]?.text).toBeFalsy();
  const listed = (await client.callTool({ name: 'list_collections', arguments: {} })) as ToolResult;
  expect(listed.structuredContent!.items).toEqual([expect.objectContaining({ name: 'readme', memory_count: 1 })]);
}

async function spawnAndUse(launch: Launch, env: Record<string, string>) {
  const { client, stderr } = await connectStdio(launch.command, launch.args, hostEnv({ ...env, ...launch.env }), dirs.make('orgmem-readme-cwd-'));
  try {
    await useTools(client);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- stderr ---\n${stderr()}`, { cause: err });
  } finally {
    await client.close();
  }
}

async function connectHttp(url: string, headers: Record<string, string>) {
  const client = new Client({ name: 'orgmem-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    await useTools(client);
  } finally {
    await client.close();
  }
}

describe('docs: local stdio configs (nothing set but the key; the per-user data directory)', () => {
  // A user's home of its own: the data lands in ~/.local/share/orgmem, as it would for them.
  let home: Record<string, string>;
  const keys: string[] = [];

  beforeAll(async () => {
    home = { HOME: dirs.make('orgmem-readme-home-') };
    const app = await createApp(loadConfig(hostEnv(home)), { log: pino({ level: 'silent' }) });
    try {
      // One tenant per config, so each starts from an empty account.
      for (const name of ['desktop', 'code', 'cursor']) keys.push((await createTenant(app, { name, email: `${name}@test.local` })).api_key);
    } finally {
      await closeApp(app);
    }
  });

  it('Claude Desktop', async () => {
    await spawnAndUse(fromJson(fill(config('claude-desktop'), keys[0]!)), home);
  }, 120_000);

  it('Claude Code', async () => {
    const added = fromClaudeAdd(fill(config('claude-code'), keys[1]!));
    expect(added.transport).toBe('stdio');
    await spawnAndUse(added, home);
  }, 120_000);

  it('Cursor', async () => {
    await spawnAndUse(fromJson(fill(config('cursor'), keys[2]!)), home);
  }, 120_000);

  it('another data directory, given in the config (the host passes nothing else)', async () => {
    const dataDir = dirs.make('orgmem-readme-data-');
    const app = await createApp(loadConfig(hostEnv({ ...home, ORGMEM_DATA_DIR: dataDir })), { log: pino({ level: 'silent' }) });
    let key: string;
    try {
      key = (await createTenant(app, { name: 'elsewhere', email: 'elsewhere@test.local' })).api_key;
    } finally {
      await closeApp(app);
    }
    const launch = fromJson(fill(config('data-dir'), key, undefined, dataDir));
    expect(launch.env.ORGMEM_DATA_DIR).toBe(dataDir);
    // The same home as the configs above: without the config's ORGMEM_DATA_DIR, this key would be unknown there.
    await spawnAndUse(launch, home);
  }, 120_000);
});

describe('docs: configs for a running server', () => {
  const { url, adminKey } = shared();

  it('remote stdio (ORGMEM_URL)', async () => {
    const t = await newTenant(url, adminKey);
    const launch = fromJson(fill(config('remote'), t.key, url));
    expect(launch.env.ORGMEM_URL).toBe(url);
    await spawnAndUse(launch, { HOME: dirs.make('orgmem-readme-home-') });
  }, 120_000);

  it('Claude Code over Streamable HTTP', async () => {
    const t = await newTenant(url, adminKey);
    const added = fromClaudeAdd(fill(config('claude-code-http'), t.key, url));
    expect(added.transport).toBe('http');
    await connectHttp(added.command, added.headers);
  });

  it('Cursor over Streamable HTTP', async () => {
    const t = await newTenant(url, adminKey);
    const entry = fromJson(fill(config('cursor-http'), t.key, url));
    await connectHttp(entry.url!, entry.headers!);
  });
});
