import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { hooksConfig, type Harness, type HookGroup } from '../../plugins/claude-code/scripts/events.mjs';
import { isJsonObject, readJsonObject, readFileIfAny, setEntry, withoutEntry, writeJson, writeText, type JsonObject } from './connect-files.ts';
import { tomlString, withoutTable, withTable } from './connect-toml.ts';

/**
 * What `orgmem connect` writes for each client (docs/connect.md): the MCP server `orgmem` in the
 * client's own config file, in its own format, and the hooks where the client runs them. The
 * locations follow HOME (and CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_CONFIG_HOME, APPDATA where the
 * client reads them).
 */

export interface Target {
  /** The server, without a trailing slash. */
  url: string;
  key: string;
  /** The hook script the hooks run (the plugin's, in this orgmem). */
  hookScript: string;
  /** bin/orgmem.js of this orgmem, for the clients that start `orgmem mcp` themselves. */
  bin: string;
}

/** One change to one file: what it is, and how it goes in and comes out (false: it was not there). */
export interface ConfigChange {
  path: string;
  what: string;
  /** False when the client gets this another way (then connect takes out what an earlier connect wrote). */
  applies?(): boolean;
  add(target: Target): void;
  remove(): boolean;
}

export interface Client {
  title: string;
  /** Its files, as the usage shows them. */
  where: string;
  changes(): ConfigChange[];
  /** What the user does next for the client to read it. */
  next: string;
}

const NAME = 'orgmem';
const mcpUrl = (t: Target) => `${t.url}/v1/mcp`;
const bearer = (t: Target) => `Bearer ${t.key}`;

function env(name: string): string | undefined {
  const value = process.env[name];
  return value && isAbsolute(value) ? value : undefined;
}

/** Where desktop apps keep their settings: ~/Library/Application Support, %APPDATA%, else $XDG_CONFIG_HOME or ~/.config. */
function appConfigDir(): string {
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support');
  if (process.platform === 'win32') return env('APPDATA') ?? join(homedir(), 'AppData', 'Roaming');
  return env('XDG_CONFIG_HOME') ?? join(homedir(), '.config');
}

const claudeDir = () => env('CLAUDE_CONFIG_DIR') ?? join(homedir(), '.claude');
const claudeJson = () => (env('CLAUDE_CONFIG_DIR') ? join(env('CLAUDE_CONFIG_DIR')!, '.claude.json') : join(homedir(), '.claude.json'));
const codexDir = () => env('CODEX_HOME') ?? join(homedir(), '.codex');

/** The MCP server `orgmem` in `file[section]`, a JSON file. */
function jsonServer(path: string, section: string, entry: (t: Target) => unknown): ConfigChange {
  return {
    path,
    what: `the MCP server "${NAME}" (${section})`,
    add: (t) => writeJson(path, setEntry(path, readJsonObject(path), section, NAME, entry(t))),
    remove() {
      const next = withoutEntry(readJsonObject(path), section, NAME);
      if (next) writeJson(path, next);
      return !!next;
    },
  };
}

/** A hook command orgmem wrote: its hook script, or `orgmem hook` as earlier versions wrote it. */
const isOrgmemHook = (command: unknown) => typeof command === 'string' && (command.startsWith('orgmem hook ') || /orgmem-hook\.mjs"? /.test(command));

/** The file without orgmem's hook groups (and without an event left with none); undefined when it had none. */
function withoutHooks(path: string, file: JsonObject): JsonObject | undefined {
  if (file.hooks === undefined) return undefined;
  if (!isJsonObject(file.hooks)) throw new Error(`"hooks" in ${path} is not an object; fix it first`);
  const ours = (g: HookGroup) => Array.isArray(g?.hooks) && g.hooks.length > 0 && g.hooks.every((h) => isOrgmemHook(h?.command));
  const hooks: JsonObject = {};
  let found = false;
  for (const [event, groups] of Object.entries(file.hooks)) {
    if (!Array.isArray(groups)) {
      hooks[event] = groups;
      continue;
    }
    const kept = (groups as HookGroup[]).filter((g) => !ours(g));
    if (kept.length < groups.length) found = true;
    if (kept.length || !groups.length) hooks[event] = kept;
  }
  if (!found) return undefined;
  const out: JsonObject = { ...file, hooks };
  if (!Object.keys(hooks).length) delete out.hooks;
  return out;
}

/** orgmem's hooks in a hooks.json or Claude Code's settings.json, in place of those an earlier connect wrote. */
function hooksFile(path: string, harness: Harness): ConfigChange {
  return {
    path,
    what: "orgmem's hooks",
    add(t) {
      if (!existsSync(t.hookScript)) throw new Error(`the hook script ${t.hookScript} is missing: this orgmem has no plugins/claude-code directory`);
      const file = readJsonObject(path);
      const base = withoutHooks(path, file) ?? file;
      const hooks: JsonObject = isJsonObject(base.hooks) ? { ...base.hooks } : {};
      for (const [event, groups] of Object.entries(hooksConfig(harness, t.hookScript).hooks)) {
        hooks[event] = [...(Array.isArray(hooks[event]) ? hooks[event] : []), ...groups];
      }
      writeJson(path, { ...base, hooks });
    },
    remove() {
      const next = withoutHooks(path, readJsonObject(path));
      if (next) writeJson(path, next);
      return !!next;
    },
  };
}

/** The table [mcp_servers.orgmem] of Codex's config.toml. */
function codexServer(path: string): ConfigChange {
  const table = `mcp_servers.${NAME}`;
  return {
    path,
    what: `the MCP server "${NAME}" ([${table}])`,
    add: (t) =>
      writeText(
        path,
        withTable(path, readFileIfAny(path) ?? '', table, [`url = ${tomlString(mcpUrl(t))}`, `http_headers = { Authorization = ${tomlString(bearer(t))} }`]),
      ),
    remove() {
      const text = readFileIfAny(path);
      if (text === undefined) return false;
      const { text: rest, found } = withoutTable(path, text, table);
      if (found) writeText(path, rest);
      return found;
    },
  };
}

/** Claude Code's plugin, as `claude plugin install orgmem@orgmem` names it in settings.json (docs/hooks.md). */
const PLUGIN = 'orgmem@orgmem';
const pluginEnabled = (settings: string) => {
  const enabled = readJsonObject(settings).enabledPlugins;
  return isJsonObject(enabled) && enabled[PLUGIN] === true;
};

/**
 * ORGMEM_URL and ORGMEM_API_KEY in the `env` of Claude Code's settings.json, for the plugin: its
 * MCP server's config (.mcp.json) is expanded from them, and its hooks read them.
 */
function pluginEnv(path: string): ConfigChange {
  const names = ['ORGMEM_URL', 'ORGMEM_API_KEY'];
  return {
    path,
    what: `${names.join(' and ')} for the plugin ${PLUGIN} (env)`,
    applies: () => pluginEnabled(path),
    add: (t) => writeJson(path, setEntry(path, setEntry(path, readJsonObject(path), 'env', names[0]!, t.url), 'env', names[1]!, t.key)),
    remove() {
      let file = readJsonObject(path);
      let found = false;
      for (const name of names) {
        const next = withoutEntry(file, 'env', name);
        if (next) [file, found] = [next, true];
      }
      if (found) writeJson(path, file);
      return found;
    },
  };
}

const http = (t: Target) => ({ type: 'http', url: mcpUrl(t), headers: { Authorization: bearer(t) } });

/** The clients, by the name `orgmem connect` takes: the one list. */
export const CLIENTS: Record<string, Client> = {
  'claude-code': {
    title: 'Claude Code',
    where: '~/.claude.json (MCP) and ~/.claude/settings.json (hooks)',
    // With the plugin installed, the plugin holds the MCP server and the hooks: only their settings are written.
    changes: () => {
      const settings = join(claudeDir(), 'settings.json');
      const withoutPlugin = () => !pluginEnabled(settings);
      return [
        { ...jsonServer(claudeJson(), 'mcpServers', http), applies: withoutPlugin },
        { ...hooksFile(settings, 'claude-code'), applies: withoutPlugin },
        pluginEnv(settings),
      ];
    },
    next: 'Restart Claude Code; /mcp lists orgmem.',
  },
  codex: {
    title: 'Codex',
    where: '~/.codex/config.toml (MCP) and ~/.codex/hooks.json (hooks), or in $CODEX_HOME',
    changes: () => [codexServer(join(codexDir(), 'config.toml')), hooksFile(join(codexDir(), 'hooks.json'), 'codex')],
    next: 'Restart Codex, then review and trust the hooks (/hooks).',
  },
  cursor: {
    title: 'Cursor',
    where: '~/.cursor/mcp.json',
    changes: () => [jsonServer(join(homedir(), '.cursor', 'mcp.json'), 'mcpServers', (t) => ({ url: mcpUrl(t), headers: { Authorization: bearer(t) } }))],
    next: 'Cursor reads it at once (Settings, MCP).',
  },
  // Claude Desktop's config file starts local commands only: `orgmem mcp` bridges stdio to the server (docs/mcp.md).
  'claude-desktop': {
    title: 'Claude Desktop',
    where: 'claude_desktop_config.json (~/.config/Claude on Linux), through orgmem mcp',
    changes: () => [
      jsonServer(join(appConfigDir(), 'Claude', 'claude_desktop_config.json'), 'mcpServers', (t) => ({
        command: process.execPath,
        args: [t.bin, 'mcp'],
        env: { ORGMEM_URL: t.url, ORGMEM_API_KEY: t.key },
      })),
    ],
    next: 'Quit and reopen Claude Desktop.',
  },
  vscode: {
    title: 'VS Code',
    where: "the user's mcp.json (~/.config/Code/User on Linux)",
    changes: () => [jsonServer(join(appConfigDir(), 'Code', 'User', 'mcp.json'), 'servers', http)],
    next: 'VS Code starts it from the MCP servers list (MCP: List Servers).',
  },
};
