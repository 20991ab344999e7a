import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * The one place a machine keeps the orgmem it talks to (docs/connect.md): connection.json in
 * $XDG_CONFIG_HOME/orgmem (default ~/.config/orgmem), `{url, api_key}`, mode 0600, written by
 * `orgmem connect`. ORGMEM_URL and ORGMEM_API_KEY in the environment win over it, each on its own.
 * The hooks and the orgmem commands that call a server read it here, and nowhere else.
 */

/** $XDG_CONFIG_HOME/orgmem/connection.json, else ~/.config/orgmem/connection.json. */
export function connectionPath(env = process.env) {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'orgmem', 'connection.json');
}

/** The file's `{url, api_key}`; empty when there is no file. A file that is not such an object is an error naming it. */
export function readConnection(path = connectionPath()) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return {};
    throw err;
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${err.message}); run orgmem connect again or fix it`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path} is not a JSON object with url and api_key`);
  const str = (v) => (typeof v === 'string' && v ? v : undefined);
  return { url: str(parsed.url), api_key: str(parsed.api_key) };
}

/** Writes the file whole (a reader never sees half of it), readable by its owner only. */
export function writeConnection(connection, path = connectionPath()) {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ url: connection.url, api_key: connection.api_key }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The url and key as set, each from the environment, else from the file; either may be missing. */
export function connectionSettings(env = process.env) {
  const file = env.ORGMEM_URL && env.ORGMEM_API_KEY ? {} : readConnection(connectionPath(env));
  return { url: (env.ORGMEM_URL || file.url)?.replace(/\/+$/, ''), key: env.ORGMEM_API_KEY || file.api_key };
}

/** The server to call, `{url, key}`; or why there is none. */
export function serverSettings(env = process.env) {
  const { url, key } = connectionSettings(env);
  const where = `set it with orgmem connect (${connectionPath(env)}) or in the environment`;
  if (!url) return `no orgmem server is set: ORGMEM_URL is not set and there is no url in the connection file; ${where}`;
  if (!key) return `no API key is set: ORGMEM_API_KEY is not set and there is no api_key in the connection file; ${where}`;
  return { url, key };
}
