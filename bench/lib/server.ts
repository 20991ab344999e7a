import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A database of its own for a benchmark run, next to (never inside) the test databases. */
export async function createDatabase(baseUrl: string, name: string, fresh: boolean): Promise<string> {
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  try {
    if (fresh) await admin.unsafe(`drop database if exists ${name} with (force)`);
    const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
    if (!exists) await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}

export interface RunningServer {
  url: string;
  /** The server process's id (e.g. to read its CPU time from /proc). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * `orgmem serve` as a child process, as it runs in production (its own event loop and pool);
 * the API only unless `worker` (then its background jobs run in the same process).
 */
export async function startOrgmem(env: Record<string, string>, port: number, opts: { worker?: boolean } = {}): Promise<RunningServer> {
  const url = `http://127.0.0.1:${port}`;
  // Another server on the port would answer the health check in this one's place.
  const busy = await fetch(`${url}/v1/memory/health`).then(
    () => true,
    () => false,
  );
  if (busy) throw new Error(`port ${port} is in use: pass another --port`);
  const child: ChildProcess = spawn(process.execPath, ['bin/orgmem.js', 'serve', ...(opts.worker ? [] : ['--no-worker']), '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, ORGMEM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`orgmem exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/v1/memory/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    pid: child.pid!,
    // Stopping a server that has exited already (stopped before) resolves at once.
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Creates a tenant through the CLI (the operator's way) and returns its API key; `admin`: an operator tenant. */
export function createTenantKey(env: Record<string, string>, name: string, tier = 'enterprise', admin = false): string {
  const out = execFileSync(
    process.execPath,
    ['bin/orgmem.js', 'admin', 'create-tenant', '--name', name, '--email', `${name}-${Date.now()}@bench.local`, '--tier', tier, ...(admin ? ['--admin'] : [])],
    { cwd: ROOT, env: { ...process.env, ORGMEM_LOG_LEVEL: 'warn', ...env }, encoding: 'utf8' },
  );
  const key = /API key \(shown only now\): (\S+)/.exec(out)?.[1];
  if (!key) throw new Error(`no key in: ${out}`);
  return key;
}

export async function api<T = any>(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}
