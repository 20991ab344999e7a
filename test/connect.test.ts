import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from './support/build.ts';
import { closedPort } from './support/closed-port.ts';
import { allBlocks } from './support/docs.ts';
import { connectStdio, hostEnv, ROOT, tempDirs } from './support/mcp.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * `orgmem connect` (docs/connect.md) on each client's real files: a home directory holding the
 * config files a user already had (test/fixtures/connect/<client>), the line docs/connect.md gives
 * for the client run in it against a running orgmem, the files read back in their own format, and
 * the entry written used as the client would use it.
 */
const BIN = join(ROOT, 'bin', 'orgmem.js');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'connect');
const CLIENTS = ['claude-code', 'codex', 'cursor', 'claude-desktop', 'vscode'];

const dirs = tempDirs();
let server: TestServer;

beforeAll(async () => {
  buildIfStale('build:js');
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
});
afterAll(async () => {
  await server?.close();
  dirs.removeAll();
});

/** A home directory holding the fixture's files. */
function homeWith(fixture: string) {
  const home = dirs.make('orgmem-connect-');
  cpSync(join(FIXTURES, fixture), home, { recursive: true });
  return home;
}

/** Runs a command with HOME set and nothing else that picks a server or a config directory. */
function run(command: string, args: string[], home: string, env: Record<string, string> = {}, input = '') {
  const child = spawn(command, args, { cwd: home, env: { PATH: process.env.PATH ?? '', HOME: home, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const orgmem = (args: string[], home: string, env: Record<string, string> = {}) => run(process.execPath, [BIN, ...args], home, env);

/** The line docs/connect.md gives for the client, run as a user runs it with the server's address in ORGMEM_URL. */
function documented(client: string, home: string) {
  const lines = allBlocks()
    .filter((b) => b.page === 'docs/connect.md')
    .map((b) => b.code.trim())
    .filter((code) => code.startsWith(`orgmem connect ${client} `));
  expect(lines, client).toEqual([`orgmem connect ${client} --key mv_...`]);
  return orgmem(lines[0]!.replace('mv_...', server.adminKey).split(' ').slice(1), home, { ORGMEM_URL: server.url });
}

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;

/** TOML as a TOML parser reads it: Python's tomllib (TOML 1.0). */
function toml(path: string): Record<string, any> {
  const read = spawnSync('python3', ['-c', 'import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))', path], { encoding: 'utf8' });
  if (read.status !== 0) throw new Error(`${path} is not valid TOML: ${read.stderr}${read.error?.message ?? ''}`);
  return JSON.parse(read.stdout) as Record<string, any>;
}

/** The MCP server at `url` as an HTTP client with these headers sees it. */
async function httpTools(url: string, headers: Record<string, string>) {
  const client = new Client({ name: 'orgmem-connect-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

const connection = (home: string) => join(home, '.config', 'orgmem', 'connection.json');

function expectConnectionFile(home: string) {
  expect(json(connection(home))).toEqual({ url: server.url, api_key: server.adminKey });
  expect(statSync(connection(home)).mode & 0o777).toBe(0o600);
}

/** A hook command written into a hooks file, run as the harness runs it: by the shell, the hook's JSON on stdin, no ORGMEM_* in the environment. */
async function runHookCommand(command: string, home: string, event: string) {
  const input = JSON.stringify({ session_id: 'connect-test', transcript_path: join(home, 't.jsonl'), cwd: home, hook_event_name: event, prompt: 'anything' });
  return run('sh', ['-c', command], home, {}, input);
}

const hookCommands = (hooks: Record<string, { hooks: { command: string }[] }[]>) =>
  Object.values(hooks).flatMap((groups) => groups.flatMap((g) => g.hooks.map((h) => h.command)));

describe('orgmem connect', () => {
  it('claude-code: the MCP server in ~/.claude.json and the hooks in ~/.claude/settings.json, beside what was there', async () => {
    const home = homeWith('claude-code');
    const claudeJson = join(home, '.claude.json');
    const settings = join(home, '.claude', 'settings.json');
    const [before, settingsBefore] = [json(claudeJson), json(settings)];
    for (let i = 0; i < 2; i++) {
      const res = await documented('claude-code', home);
      expect(res, res.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(res.stdout).toContain(`wrote the MCP server "orgmem" (mcpServers) to ${claudeJson}`);
      expect(res.stdout).toContain(`wrote orgmem's hooks to ${settings}`);
    }
    const after = json(claudeJson);
    const { orgmem: entry, ...otherServers } = after.mcpServers;
    expect(entry).toEqual({ type: 'http', url: `${server.url}/v1/mcp`, headers: { Authorization: `Bearer ${server.adminKey}` } });
    expect({ ...after, mcpServers: otherServers }).toEqual(before);
    expect(await httpTools(entry.url, entry.headers)).toContain('search');
    expectConnectionFile(home);

    // The user's hooks stay; orgmem's are there once, after two runs, and run from the connection file alone.
    const { hooks, ...otherSettings } = json(settings);
    const { hooks: hooksBefore, ...otherBefore } = settingsBefore;
    expect(otherSettings).toEqual(otherBefore);
    expect(Object.keys(hooks).sort()).toEqual(['PostToolUse', 'PreCompact', 'SessionEnd', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    expect(hooks.PostToolUse).toEqual(hooksBefore.PostToolUse);
    expect(hooks.Stop.slice(0, 1)).toEqual(hooksBefore.Stop);
    const ours = hookCommands(hooks).filter((c) => c.includes('orgmem-hook.mjs'));
    expect(ours).toHaveLength(5);
    const script = join(ROOT, 'plugins', 'claude-code', 'scripts', 'orgmem-hook.mjs');
    expect(hooks.UserPromptSubmit).toEqual([{ hooks: [{ type: 'command', command: `node "${script}" UserPromptSubmit`, timeout: 5 }] }]);
    expect(await runHookCommand(hooks.SessionStart[0].hooks[0].command, home, 'SessionStart')).toEqual({ code: 0, stdout: '', stderr: '' });

    const removed = await orgmem(['connect', 'claude-code', '--remove'], home);
    expect(removed).toMatchObject({ code: 0, stderr: '' });
    expect(json(claudeJson)).toEqual(before);
    expect(json(settings)).toEqual(settingsBefore);
  });

  it('claude-code with the orgmem plugin installed: only the settings the plugin reads, in the env of settings.json', async () => {
    const home = homeWith('claude-code-plugin');
    const settings = join(home, '.claude', 'settings.json');
    const before = json(settings);
    const res = await documented('claude-code', home);
    expect(res, res.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(json(settings)).toEqual({ ...before, env: { ...before.env, ORGMEM_URL: server.url, ORGMEM_API_KEY: server.adminKey } });
    expect(existsSync(join(home, '.claude.json'))).toBe(false);
    expect(res.stdout).toContain('ORGMEM_URL and ORGMEM_API_KEY for the plugin orgmem@orgmem (env)');
    expect((await orgmem(['connect', 'claude-code', '--remove'], home)).code).toBe(0);
    expect(json(settings)).toEqual(before);
  });

  it('codex: [mcp_servers.orgmem] in config.toml, every other line kept, and the hooks in hooks.json', async () => {
    const home = homeWith('codex');
    const config = join(home, '.codex', 'config.toml');
    const hooksFile = join(home, '.codex', 'hooks.json');
    const [text, before, hooksBefore] = [readFileSync(config, 'utf8'), toml(config), json(hooksFile)];
    for (let i = 0; i < 2; i++) expect(await documented('codex', home)).toMatchObject({ code: 0, stderr: '' });
    const after = toml(config);
    const { orgmem: entry, ...otherServers } = after.mcp_servers;
    expect(entry).toEqual({ url: `${server.url}/v1/mcp`, http_headers: { Authorization: `Bearer ${server.adminKey}` } });
    expect({ ...after, mcp_servers: otherServers }).toEqual(before);
    expect(readFileSync(config, 'utf8').startsWith(text.trimEnd())).toBe(true);
    expect(await httpTools(entry.url, entry.http_headers)).toContain('search');
    expectConnectionFile(home);

    const { hooks } = json(hooksFile);
    // Codex has no SessionEnd.
    expect(Object.keys(hooks).sort()).toEqual(['PreCompact', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    expect(hooks.Stop[0]).toEqual(hooksBefore.hooks.Stop[0]);
    expect(hookCommands(hooks).filter((c) => c.includes('orgmem-hook.mjs'))).toHaveLength(4);
    expect(await runHookCommand(hooks.UserPromptSubmit[0].hooks[0].command, home, 'UserPromptSubmit')).toEqual({ code: 0, stdout: '', stderr: '' });

    expect((await orgmem(['connect', 'codex', '--remove'], home)).code).toBe(0);
    expect(readFileSync(config, 'utf8')).toBe(text);
    expect(json(hooksFile)).toEqual(hooksBefore);
  });

  it('codex: an orgmem server written in a form it does not edit is left alone, with why', async () => {
    const home = homeWith('codex');
    const config = join(home, '.codex', 'config.toml');
    const text = `${readFileSync(config, 'utf8')}\n[mcp_servers]\norgmem = { url = "http://elsewhere/v1/mcp" }\n`;
    writeFileSync(config, text);
    const res = await documented('codex', home);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${config} sets mcp_servers.orgmem in a form orgmem connect does not edit`);
    expect(readFileSync(config, 'utf8')).toBe(text);
  });

  it('cursor: mcpServers.orgmem in ~/.cursor/mcp.json', async () => {
    const home = homeWith('cursor');
    const path = join(home, '.cursor', 'mcp.json');
    const before = json(path);
    expect(await documented('cursor', home)).toMatchObject({ code: 0, stderr: '' });
    const { orgmem: entry, ...others } = json(path).mcpServers;
    expect(entry).toEqual({ url: `${server.url}/v1/mcp`, headers: { Authorization: `Bearer ${server.adminKey}` } });
    expect(others).toEqual(before.mcpServers);
    expect(await httpTools(entry.url, entry.headers)).toContain('search');
    expectConnectionFile(home);
    expect((await orgmem(['connect', 'cursor', '--remove'], home)).code).toBe(0);
    expect(json(path)).toEqual(before);
  });

  it('claude-desktop: a stdio server, orgmem mcp bridging to the server, in claude_desktop_config.json', async () => {
    const home = homeWith('claude-desktop');
    const path = join(home, '.config', 'Claude', 'claude_desktop_config.json');
    const before = json(path);
    expect(await documented('claude-desktop', home)).toMatchObject({ code: 0, stderr: '' });
    const after = json(path);
    const { orgmem: entry, ...others } = after.mcpServers;
    expect(entry).toEqual({ command: process.execPath, args: [BIN, 'mcp'], env: { ORGMEM_URL: server.url, ORGMEM_API_KEY: server.adminKey } });
    expect({ ...after, mcpServers: others }).toEqual(before);
    // Started as Claude Desktop starts it: a clean environment but the entry's own.
    const { client } = await connectStdio(entry.command, entry.args, hostEnv({ HOME: home, ...entry.env }), home);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('search');
    } finally {
      await client.close();
    }
    expect((await orgmem(['connect', 'claude-desktop', '--remove'], home)).code).toBe(0);
    expect(json(path)).toEqual(before);
  });

  it("vscode: servers.orgmem in the user's mcp.json, its inputs kept", async () => {
    const home = homeWith('vscode');
    const path = join(home, '.config', 'Code', 'User', 'mcp.json');
    const before = json(path);
    expect(await documented('vscode', home)).toMatchObject({ code: 0, stderr: '' });
    const after = json(path);
    const { orgmem: entry, ...others } = after.servers;
    expect(entry).toEqual({ type: 'http', url: `${server.url}/v1/mcp`, headers: { Authorization: `Bearer ${server.adminKey}` } });
    expect({ ...after, servers: others }).toEqual(before);
    expect(await httpTools(entry.url, entry.headers)).toContain('search');
    expect((await orgmem(['connect', 'vscode', '--remove'], home)).code).toBe(0);
    expect(json(path)).toEqual(before);
  });

  it('a wrong key or no server: a clear message, exit 1, and no file touched', async () => {
    for (const client of CLIENTS) {
      const home = homeWith(client);
      const files = spawnSync('find', [home, '-type', 'f'], { encoding: 'utf8' }).stdout.trim().split('\n').sort();
      const contents = files.map((f) => readFileSync(f, 'utf8'));
      const wrong = await orgmem(['connect', client, '--url', server.url, '--key', 'mv_not_a_key'], home);
      expect(wrong.code, client).toBe(1);
      expect(wrong.stderr).toMatch(new RegExp(`^orgmem: the server at ${server.url} refused the key \\(401: .+\\); give a valid key with --key\\n$`));
      const down = `http://127.0.0.1:${await closedPort()}`;
      const none = await orgmem(['connect', client, '--url', down, '--key', server.adminKey], home);
      expect(none).toMatchObject({
        code: 1,
        stderr: `orgmem: no orgmem server answers at ${down} (ECONNREFUSED); start one (orgmem serve) or give its address with --url\n`,
      });
      expect(spawnSync('find', [home, '-type', 'f'], { encoding: 'utf8' }).stdout.trim().split('\n').sort()).toEqual(files);
      expect(files.map((f) => readFileSync(f, 'utf8'))).toEqual(contents);
    }
  });

  it('an unknown client is a usage error listing the known ones; no key is one too', async () => {
    const home = dirs.make('orgmem-connect-');
    const unknown = await orgmem(['connect', 'zed'], home);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(new RegExp(`^orgmem: unknown client 'zed'; one of ${CLIENTS.join(', ')}\\n`));
    const keyless = await orgmem(['connect', 'cursor'], home);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain(`orgmem: an API key is needed: --key K, ORGMEM_API_KEY, or the connection file (${connection(home)})`);
  });

  it('a client file that is not its format is left alone, with its path', async () => {
    const home = homeWith('cursor');
    const path = join(home, '.cursor', 'mcp.json');
    writeFileSync(path, '{"mcpServers": ');
    const res = await documented('cursor', home);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`orgmem: ${path} is not valid JSON`);
    expect(readFileSync(path, 'utf8')).toBe('{"mcpServers": ');
  });
});
