import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A database of its own for a benchmark run, next to (never inside) the test databases. When
 * `baseUrl` is a Citus coordinator (the citus extension in its database), the database is made a
 * database of that cluster, as docs/citus.md tells an operator: on the coordinator and on each of
 * the base's workers, with the citus and vector extensions, the coordinator and the workers
 * registered in it.
 */
export async function createDatabase(baseUrl: string, name: string, fresh: boolean): Promise<string> {
  const workers = await citusWorkers(baseUrl);
  if (fresh) await dropDatabase(baseUrl, name);
  for (const server of [baseUrl, ...(workers ?? [])]) {
    const admin = postgres(server, { max: 1, onnotice: () => {} });
    try {
      const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
      if (!exists) await admin.unsafe(`create database ${name}`);
    } finally {
      await admin.end();
    }
    if (!workers) continue;
    // Only what is missing: a worker whose database holds the cluster's metadata refuses any
    // CREATE EXTENSION, IF NOT EXISTS included.
    const db = postgres(at(server, name), { max: 1, onnotice: () => {} });
    try {
      const have = new Set((await db<{ name: string }[]>`select extname as name from pg_extension`).map((r) => r.name));
      for (const ext of ['citus', 'vector']) if (!have.has(ext)) await db.unsafe(`create extension ${ext}`);
    } finally {
      await db.end();
    }
  }
  if (workers) {
    const db = postgres(at(baseUrl, name), { max: 1, onnotice: () => {} });
    try {
      const coordinator = new URL(baseUrl);
      await db`select citus_set_coordinator_host(${coordinator.hostname}, ${Number(coordinator.port || 5432)})`;
      for (const w of workers) {
        const { hostname, port } = new URL(w);
        await db`select citus_add_node(${hostname}, ${Number(port)}) where not exists (select 1 from pg_dist_node where nodename = ${hostname} and nodeport = ${Number(port)})`;
      }
    } finally {
      await db.end();
    }
  }
  return at(baseUrl, name);
}

/** Drops the database; on a Citus coordinator on every node its cluster or the base's has. */
export async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  // The nodes' own database is the base's: the dropped one cannot be connected to while it goes.
  const own = new URL(baseUrl).pathname.slice(1);
  const workers = [...((await citusWorkers(baseUrl)) ?? []), ...((await citusWorkers(at(baseUrl, name)).catch(() => null)) ?? [])];
  for (const server of new Set([baseUrl, ...workers.map((w) => at(w, own))])) {
    const admin = postgres(server, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

/** `url` with another database. */
export function at(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** The worker nodes (as URLs of the same database) of a Citus coordinator's database; null on plain PostgreSQL. */
export async function citusWorkers(url: string): Promise<string[] | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    if (!(await sql`select 1 from pg_extension where extname = 'citus'`).length) return null;
    const nodes = await sql<{ host: string; port: number }[]>`select nodename as host, nodeport as port from pg_dist_node where groupid <> 0 order by nodeport`;
    return nodes.map((n) => {
      const u = new URL(url);
      u.hostname = n.host;
      u.port = String(n.port);
      return u.toString();
    });
  } finally {
    await sql.end();
  }
}

export interface RunningServer {
  url: string;
  /** The server process's id (e.g. to read its CPU time from /proc). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * `orgmem serve` as a child process, as it runs in production (its own event loop and pool);
 * the API only unless `worker` (then its background jobs run in the same process). `root`: another
 * checkout's build (an earlier commit's, to measure a change before and after).
 */
export async function startOrgmem(env: Record<string, string>, port: number, opts: { worker?: boolean; root?: string } = {}): Promise<RunningServer> {
  const url = `http://127.0.0.1:${port}`;
  // Another server on the port would answer the health check in this one's place.
  const busy = await fetch(`${url}/v1/memory/health`).then(
    () => true,
    () => false,
  );
  if (busy) throw new Error(`port ${port} is in use: pass another --port`);
  const child: ChildProcess = spawn(process.execPath, ['bin/orgmem.js', 'serve', ...(opts.worker ? [] : ['--no-worker']), '--port', String(port)], {
    cwd: opts.root ?? ROOT,
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
