import type { Socket } from 'node:net';
import postgres from 'postgres';
import { connectChecked, PrivateTargetError, resolveTarget, type TargetRule } from '../public-target.ts';
import type { Db, Queryable, Row, Tx } from './db.ts';

export interface PostgresOptions {
  /** Seconds to wait for a connection (postgres.js's default is 30). */
  connectTimeout?: number;
  /** Seconds after which an unused connection is closed (never, by default). */
  idleTimeout?: number;
  /** A tenant's database: every connection only to an address this rule allows (public-target.ts). */
  targets?: TargetRule;
}

/** Where a connection goes: its hosts and ports, or a Unix socket's path. */
interface Destination {
  host: string[];
  port: number[];
  path: string | false;
}

/**
 * The socket of each connection under `rule`, to `to`: what postgres.js read from the connection
 * string and the PG* variables (an empty host is PGHOST or localhost; a host starting with / a
 * Unix socket; `h1,h2` several hosts), checked whole, then the first host that answers is connected
 * to at its checked address. postgres.js is given that one host: its own failover over several
 * waits for a socket that a refusal never opens.
 */
function checkedSocket(rule: TargetRule, to: Destination, timeoutMs: number) {
  return async (): Promise<Socket> => {
    if (to.path) throw new PrivateTargetError(`${to.path} is a Unix socket on this server's own machine, which this server does not connect to`);
    for (const h of to.host) await resolveTarget(rule, h);
    let failure: unknown;
    for (const [i, h] of to.host.entries()) {
      try {
        const socket = await connectChecked(rule, h, to.port[i] ?? 5432, timeoutMs);
        // postgres.js names a TLS server by this, as it does for the sockets it opens itself.
        return Object.assign(socket, { host: h });
      } catch (err) {
        failure = err;
      }
    }
    throw failure;
  };
}

/**
 * Settings of every connection the port opens (bench/search/bare.ts replays searches with them).
 * JIT off: every statement here is short, and compiling one with LLVM costs tens of
 * milliseconds, which a large filtered search's cost estimate would otherwise trigger.
 * Custom plans always: postgres.js prepares every statement, and PostgreSQL may switch one to a
 * generic plan after its fifth run; whether search takes the HNSW index, a filter's index, the
 * GIN index or a scan depends on how many rows the tenant, collection, filters and words
 * select, which a generic plan cannot know. Planning each time costs tens of microseconds.
 * On a Citus coordinator, SET LOCAL reaches the worker that plans a shard's query (search's
 * planner settings, docs/citus.md): set on each connection rather than on the database, which
 * would reach only connections opened after it; plain PostgreSQL keeps it as an unused placeholder.
 */
export const CONNECTION_SETTINGS = { jit: 'off', plan_cache_mode: 'force_custom_plan', 'citus.propagate_set_commands': 'local' };

/**
 * Where `url` points, for the checked socket. The hosts are read here: postgres.js splits a host on
 * ':' (so `[::1]` becomes "[") and keeps a percent-escaped one as it is (so `%2Ftmp`, a socket
 * directory to libpq, becomes a name that never resolves), and either would fail as "could not
 * connect" rather than as refused. No host at all is what postgres.js makes of it (PGHOST, or
 * localhost), read from the driver itself.
 */
function destinationOf(url: string): Destination {
  const driver = postgres(url).options as unknown as Destination;
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(url)?.[1] ?? '';
  const list = authority.slice(authority.lastIndexOf('@') + 1);
  if (!list) return driver;
  const to: Destination = { host: [], port: [], path: false };
  for (const part of list.split(',')) {
    const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(part);
    let host: string;
    try {
      host = decodeURIComponent(m?.[1] ?? '').replace(/^\[(.*)\]$/, '$1');
    } catch {
      host = '';
    }
    if (!m || !host) throw new Error(`"${part}" is not a host and port this server can read`);
    const port = m[2] ? Number(m[2]) : 5432;
    // A host that is a path is a Unix socket's directory, as libpq reads it.
    if (host.startsWith('/')) to.path ||= `${host.replace(/\/$/, '')}/.s.PGSQL.${port}`;
    to.host.push(host);
    to.port.push(port);
  }
  return to;
}

export function openPostgres(url: string, max: number, opts: PostgresOptions = {}): Db {
  // Where postgres.js would connect (without connecting), for the checked socket.
  const to = opts.targets?.publicOnly ? destinationOf(url) : null;
  const sql = postgres(url, {
    max,
    onnotice: () => {},
    prepare: true,
    connection: CONNECTION_SETTINGS,
    ...(opts.connectTimeout && { connect_timeout: opts.connectTimeout }),
    ...(opts.idleTimeout && { idle_timeout: opts.idleTimeout }),
    ...(to && { host: to.host[0], port: to.port[0], socket: checkedSocket(opts.targets!, to, (opts.connectTimeout ?? 30) * 1000) }),
  });
  const wrap = (s: postgres.Sql | postgres.TransactionSql): Queryable => ({
    async query<T = Row>(text: string, params: unknown[] = []) {
      return (await s.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as T[];
    },
    async exec(text: string) {
      await s.unsafe(text).simple();
    },
  });
  // postgres.js fails a whole transaction on any failed statement, even a caught one, unless the
  // statement ran in its own savepoint scope: so savepoints go through it rather than raw SQL.
  const wrapTx = (tx: postgres.TransactionSql): Tx => ({
    ...wrap(tx),
    savepoint: async (fn) => (await tx.savepoint((s) => fn(wrapTx(s)))) as Awaited<ReturnType<typeof fn>>,
  });
  const root = wrap(sql);
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction(fn) {
      return (await sql.begin((tx) => fn(wrapTx(tx)))) as Awaited<ReturnType<typeof fn>>;
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}
