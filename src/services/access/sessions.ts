import { randomBytes } from 'node:crypto';
import type { App } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';
import { hashKey } from './keys.ts';

/**
 * A signed-in person's session (docs/people.md, "Sessions"): a token kept in an HTTP-only cookie,
 * authenticated like a key (authenticate.ts tells it by this prefix), and a CSRF token the
 * dashboard sends back in a header (or a form in a form field) with every call the cookie
 * authenticates. Only the token's hash is stored.
 */
export const SESSION_PREFIX = 'mvs_';

/** How long a session lasts; signing out or a suspension ends it earlier. */
export const SESSION_SECONDS = 12 * 3600;

export async function createSession(q: Queryable, tenantId: string, personId: string): Promise<{ token: string; csrf: string; expires_at: Date }> {
  const token = `${SESSION_PREFIX}${randomBytes(32).toString('base64url')}`;
  const csrf = randomBytes(24).toString('base64url');
  const expires = new Date(Date.now() + SESSION_SECONDS * 1000);
  await q.query('insert into person_sessions (token_hash, tenant_id, person_id, csrf, expires_at) values ($1, $2, $3, $4, $5)', [
    hashKey(token),
    tenantId,
    personId,
    csrf,
    expires,
  ]);
  return { token, csrf, expires_at: expires };
}

/** The CSRF token of a live session, or null: what a call the session's cookie authenticates must carry. */
export async function sessionCsrf(app: App, token: string): Promise<string | null> {
  if (!token.startsWith(SESSION_PREFIX)) return null;
  const [row] = await app.platform.query<{ csrf: string }>(
    'select csrf from person_sessions where token_hash = $1 and revoked_at is null and expires_at > now()',
    [hashKey(token)],
  );
  return row?.csrf ?? null;
}

// The times are sent, not now(): these are reference tables on Citus, written on every node.

/** Ends one session (signing out). */
export async function endSession(app: App, token: string): Promise<void> {
  await app.platform.query('update person_sessions set revoked_at = $2 where token_hash = $1 and revoked_at is null', [hashKey(token), new Date()]);
}

/** Ends every session of a person (suspended or removed: docs/people.md, "People"). */
export async function endSessionsOf(q: Queryable, tenantId: string, personId: string): Promise<void> {
  await q.query('update person_sessions set revoked_at = $3 where tenant_id = $1 and person_id = $2 and revoked_at is null', [tenantId, personId, new Date()]);
}
