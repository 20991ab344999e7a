import type { AuthedCtx } from '../../core/context.ts';
import { badRequest } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import { PrivateTargetError } from '../../ports/public-target.ts';
import { openDatabaseApp } from './pools.ts';
import { UnusableDatabaseError } from './schema.ts';

/** What PUT answers about the data stored before; DELETE's counterpart is in `REVERTED`. */
export const SWITCHED =
  'New data goes to this database from now on. Data stored before stays where it was (the platform database or your previous one), ' +
  'untouched and not visible while this config is set: export it before the change and import it after to bring it along.';
export const REVERTED =
  'Your data goes to the platform database again. What your database holds stays there, untouched: the service no longer reads it. ' +
  'Data you had on the platform before setting the config is visible again.';

/** postgres://user:****@host:port/db, with a `password` query parameter masked too. */
export function maskConnectionString(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '****';
  if (u.searchParams.has('password')) u.searchParams.set('password', '****');
  return u.toString();
}

/** Why a tenant database is not available on a server that runs on its embedded database (GET says it, PUT and DELETE refuse with it). */
const UNAVAILABLE = 'A tenant database needs the service to run on a PostgreSQL server (DATABASE_URL); the embedded database cannot hand data to another one';

function needsServer(ctx: AuthedCtx) {
  if (!ctx.app.config.databaseUrl) throw badRequest(UNAVAILABLE);
}

/** The config in effect; on the embedded database there is none to have, which GET says instead of refusing. */
export async function getDatabaseConfig(ctx: AuthedCtx) {
  if (!ctx.app.config.databaseUrl) {
    return {
      available: false,
      unavailable_reason: UNAVAILABLE,
      configured: false,
      database: 'platform' as const,
      connection_string: null,
      created_at: null,
      updated_at: null,
    };
  }
  const [row] = await ctx.app.platform.query<{ sealed: string; created_at: Date; updated_at: Date }>(
    'select connection_string_sealed as sealed, created_at, updated_at from database_configs where tenant_id = $1',
    [ctx.tenant.id],
  );
  return {
    available: true,
    unavailable_reason: null,
    configured: !!row,
    database: row ? ('own' as const) : ('platform' as const),
    connection_string: row ? maskConnectionString(ctx.app.secrets.decrypt(row.sealed)) : null,
    created_at: iso(row?.created_at),
    updated_at: iso(row?.updated_at),
  };
}

// The self-test connects with postgres.js's connect timeout (5 s, pools.ts), so an address that
// does not answer fails the PUT in seconds.
const describe = (err: unknown) => (err as Error).message || String(err);

/**
 * Connects (5 s at most), checks that pgvector is available and that it is no orgmem platform
 * database, migrates the schema there, then saves the string sealed. From the next request on, the
 * tenant's data is read and written there (authentication resolves it).
 */
export async function putDatabaseConfig(ctx: AuthedCtx, connectionString: string) {
  needsServer(ctx);
  // The self-test's connections are checked as every later one is (pools.ts), on the host the driver reads.
  try {
    const view = await openDatabaseApp(ctx.app, connectionString);
    await view.db.close();
  } catch (err) {
    if (err instanceof PrivateTargetError) throw badRequest(`The database address is not allowed: ${err.message}`);
    if (err instanceof UnusableDatabaseError) throw badRequest(`The database cannot be used: ${err.message}`);
    throw badRequest(`Could not connect to and prepare the database: ${describe(err)}`);
  }
  await ctx.app.platform.query(
    `insert into database_configs (tenant_id, connection_string_sealed) values ($1, $2)
     on conflict (tenant_id) do update set connection_string_sealed = excluded.connection_string_sealed, updated_at = excluded.updated_at`,
    [ctx.tenant.id, ctx.app.secrets.encrypt(connectionString)],
  );
  return { ...(await getDatabaseConfig(ctx)), note: SWITCHED };
}

/** Back to the platform database; no config is not an error. */
export async function deleteDatabaseConfig(ctx: AuthedCtx) {
  needsServer(ctx);
  await ctx.app.platform.query('delete from database_configs where tenant_id = $1', [ctx.tenant.id]);
  return { ...(await getDatabaseConfig(ctx)), note: REVERTED };
}
