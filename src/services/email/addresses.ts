import { randomBytes } from 'node:crypto';
import type { App, AuthedCtx } from '../../core/context.ts';
import type { Queryable } from '../../ports/db/db.ts';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** 24 characters of 36: about 124 bits, so a drop address cannot be guessed. */
const TOKEN_CHARS = 24;

/** A random token of lowercase letters and digits: bytes of 252 and over are skipped so each character is uniform. */
export function newDropToken(): string {
  let token = '';
  while (token.length < TOKEN_CHARS) {
    for (const b of randomBytes(TOKEN_CHARS * 2)) {
      if (b < 252 && token.length < TOKEN_CHARS) token += ALPHABET[b % ALPHABET.length];
    }
  }
  return token;
}

export interface DropAddress {
  address: string;
  collection: string;
}

const view = (app: App, row: { token: string; collection: string }): DropAddress => ({
  address: `${row.token}@${app.config.email.domain}`,
  collection: row.collection,
});

/** The tenant's drop address, created on first read; concurrent first reads agree on one. */
export async function getDropAddress(ctx: AuthedCtx): Promise<DropAddress> {
  const q = ctx.app.platform;
  await q.query('insert into email_addresses (tenant_id, token) values ($1, $2) on conflict (tenant_id) do nothing', [ctx.tenant.id, newDropToken()]);
  const [row] = await q.query<{ token: string; collection: string }>('select token, collection from email_addresses where tenant_id = $1', [ctx.tenant.id]);
  return view(ctx.app, row!);
}

/** A new token in place of the old one, which no longer resolves from this statement on. */
export async function rotateDropAddress(ctx: AuthedCtx): Promise<DropAddress> {
  const [row] = await ctx.app.platform.query<{ token: string; collection: string }>(
    `insert into email_addresses (tenant_id, token) values ($1, $2)
     on conflict (tenant_id) do update set token = excluded.token, rotated_at = excluded.created_at
     returning token, collection`,
    [ctx.tenant.id, newDropToken()],
  );
  return view(ctx.app, row!);
}

/** The tenants (and their receiving collections) whose current tokens are among `tokens`. */
export async function findDropTargets(q: Queryable, tokens: string[]): Promise<Array<{ tenant_id: string; collection: string }>> {
  if (!tokens.length) return [];
  return q.query<{ tenant_id: string; collection: string }>('select tenant_id, collection from email_addresses where token = any($1::text[])', [tokens]);
}
