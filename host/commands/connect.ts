import { realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { HELP, UsageError, type Command } from './command.ts';
import { CLIENTS } from './connect-clients.ts';

const DEFAULT_URL = 'http://127.0.0.1:8080';

export const connect: Command = {
  usage: `Usage: orgmem connect CLIENT [--url U] [--key K] [--remove]

Connects an MCP client to a running orgmem (docs/connect.md): checks the key against the server's
MCP endpoint, writes the URL and key to the connection file ($XDG_CONFIG_HOME/orgmem/connection.json,
default ~/.config/orgmem, mode 0600) and the client's MCP server "orgmem" (and hooks) into its own
config files, keeping everything else in them.

Clients:
${Object.entries(CLIENTS)
  .map(([name, c]) => `  ${name.padEnd(18)}${c.where}`)
  .join('\n')}

Options:
      --url U       the server (default: ORGMEM_URL, else the connection file's, else ${DEFAULT_URL})
      --key K       the API key (default: ORGMEM_API_KEY, else the connection file's)
      --remove      take orgmem's entries out of the client's files, and nothing else
${HELP}`,
  options: { url: { type: 'string' }, key: { type: 'string' }, remove: { type: 'boolean' } },
  positionals: 1,
  async run(values, [name]) {
    const { connectionPath, connectionSettings, writeConnection } = await import('../../plugins/claude-code/scripts/connection.mjs');
    const client = Object.hasOwn(CLIENTS, name!) ? CLIENTS[name!] : undefined;
    if (!client) throw new UsageError(`unknown client '${name}'; one of ${Object.keys(CLIENTS).join(', ')}`);
    const changes = client.changes();
    const out: string[] = [];
    if (values.remove) {
      for (const change of changes) out.push(change.remove() ? `removed ${change.what} from ${change.path}` : `no ${change.what} in ${change.path}`);
      return void process.stdout.write(`${out.join('\n')}\n`);
    }
    for (const flag of ['url', 'key'] as const) if (values[flag] === '') throw new UsageError(`--${flag} needs a value`);
    const set = connectionSettings();
    const url = ((values.url as string | undefined) ?? set.url ?? DEFAULT_URL).replace(/\/+$/, '');
    if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--url must be an http:// or https:// address, not '${url}'`);
    const key = (values.key as string | undefined) ?? set.key;
    if (!key) throw new UsageError(`an API key is needed: --key K, ORGMEM_API_KEY, or the connection file (${connectionPath()})`);
    const { checkConnection } = await import('./connect-check.ts');
    out.push(`${url}: the key works (${await checkConnection(url, key)} answered the MCP initialize)`);
    // bin/orgmem.js, and host/cli.ts under tsx, are both one directory below orgmem's own.
    const root = resolve(dirname(realpathSync(process.argv[1]!)), '..');
    const target = { url, key, hookScript: join(root, 'plugins', 'claude-code', 'scripts', 'orgmem-hook.mjs'), bin: join(root, 'bin', 'orgmem.js') };
    for (const change of changes) {
      if (change.applies?.() === false) {
        if (change.remove()) out.push(`removed ${change.what} from ${change.path}`);
        continue;
      }
      change.add(target);
      out.push(`wrote ${change.what} to ${change.path}`);
    }
    writeConnection({ url, api_key: key });
    out.push(`wrote the url and key to ${connectionPath()}`);
    process.stdout.write(`${out.join('\n')}\n${client.title}: ${client.next}\n`);
  },
};
