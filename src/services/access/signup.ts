import { createHash, randomBytes } from 'node:crypto';
import type { App, PublicCtx } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import type { Queryable } from '../../ports/db/db.ts';
import type { Tenant } from '../../schemas/access.ts';
import { appendAudit } from '../events/audit.ts';
import { enqueueMail } from '../events/mail.ts';
import { insertKey } from './keys.ts';
import { enforce, hit } from './rate-limit.ts';
import { insertTenant, tenantView, type TenantRow } from './tenants.ts';

/** The one answer of signup and recover-key, whatever happened: no account enumeration. */
export const LINK_SENT = { detail: 'If the address can be used, a link was sent.' };
const TOKEN_TTL_HOURS = 24;
const HOUR = 3600;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Links point at ORGMEM_PUBLIC_URL, never at the request's Host header: a forged Host would
 * otherwise mail the victim a link to the attacker's server carrying a valid token.
 */
export const linkBase = (app: App) => (app.config.publicUrl ?? `http://localhost:${app.config.port}`).replace(/\/$/, '');

/** Per client address and per email address, a fixed one-hour window each. */
async function limitPublic(ctx: PublicCtx, email: string): Promise<void> {
  const { perIpPerHour, perEmailPerHour } = ctx.app.config.signupLimits;
  enforce(null, perIpPerHour, await hit(ctx.app, ctx.app.platform, `ip:${ctx.ip ?? 'unknown'}`, HOUR), 'client address');
  enforce(null, perEmailPerHour, await hit(ctx.app, ctx.app.platform, `email:${sha256(email.toLowerCase())}`, HOUR), 'email address');
}

/** A one-time reveal link; only the token's hash is stored. */
async function issueLink(app: App, q: Queryable, tenantId: string, purpose: 'signup' | 'recover'): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await q.query(`insert into reveal_tokens (tenant_id, token_hash, purpose, expires_at) values ($1, $2, $3, now() + make_interval(hours => $4::int))`, [
    tenantId,
    sha256(token),
    purpose,
    TOKEN_TTL_HOURS,
  ]);
  await appendAudit(q, tenantId, null, { action: `account.${purpose}`, target: 'reveal-link', detail: {} });
  return `${linkBase(app)}/v1/memory/reveal/${token}`;
}

/** Creates a free-tier tenant and mails its reveal link; an address with an account gets a notice instead. */
export async function signup(ctx: PublicCtx, input: { email: string; name?: string }) {
  await limitPublic(ctx, input.email);
  await ctx.app.platform.transaction(async (tx) => {
    const tenant = await insertTenant(tx, { name: input.name ?? input.email, email: input.email, tier: 'free' });
    if (!tenant) {
      return enqueueMail(ctx.app, tx, {
        to: input.email,
        subject: 'Your orgmem sign-up',
        text:
          'Someone asked to sign up to orgmem with this address, which already has an account.\n\n' +
          `To get a new API key for it, ask for a key recovery: POST ${linkBase(ctx.app)}/v1/memory/recover-key\n\n` +
          'If this was not you, you can ignore this mail.\n',
      });
    }
    const link = await issueLink(ctx.app, tx, tenant.id, 'signup');
    await enqueueMail(ctx.app, tx, {
      to: input.email,
      subject: 'Your orgmem API key',
      text:
        `Welcome to orgmem. Your account "${tenant.name}" is ready.\n\n` +
        `Open this link to see your API key. It works once, within ${TOKEN_TTL_HOURS} hours:\n\n${link}\n\n` +
        'If you did not sign up, ignore this mail.\n',
    });
  });
  return LINK_SENT;
}

/** Mails a link that issues a new key for the account of this address, if there is one. */
export async function recoverKey(ctx: PublicCtx, email: string) {
  await limitPublic(ctx, email);
  await ctx.app.platform.transaction(async (tx) => {
    const [tenant] = await tx.query<{ id: string }>('select id from tenants where lower(email) = lower($1)', [email]);
    if (!tenant) return;
    const link = await issueLink(ctx.app, tx, tenant.id, 'recover');
    await enqueueMail(ctx.app, tx, {
      to: email,
      subject: 'Your new orgmem API key',
      text:
        'Someone (hopefully you) asked for a new API key for the orgmem account of this address.\n\n' +
        `Open this link to get it. It works once, within ${TOKEN_TTL_HOURS} hours:\n\n${link}\n\n` +
        'Your existing keys keep working; revoke any you no longer trust with DELETE /v1/memory/keys/{key_id}.\n' +
        'If this was not you, ignore this mail.\n',
    });
  });
  return LINK_SENT;
}

/**
 * Opens a reveal link once: marks it used and mints a new API key for the account in the same
 * transaction (keys are stored hashed, so an existing key can never be shown again).
 */
export async function reveal(ctx: PublicCtx, token: string): Promise<{ api_key: string; tenant: Tenant }> {
  return ctx.app.platform.transaction(async (tx) => {
    const [link] = await tx.query<{ tenant_id: string; purpose: 'signup' | 'recover' }>(
      `update reveal_tokens set used_at = now()
        where token_hash = $1 and used_at is null and expires_at > now() returning tenant_id, purpose`,
      [sha256(token)],
    );
    if (!link) throw notFound('This link is unknown, already used or expired');
    const { row: key, apiKey } = await insertKey(tx, link.tenant_id, link.purpose === 'signup' ? 'default' : 'recovered', 'admin', false);
    const [tenant] = await tx.query<TenantRow>('select * from tenants where id = $1', [link.tenant_id]);
    await appendAudit(
      tx,
      link.tenant_id,
      { id: key.id, label: key.label },
      { action: 'account.reveal', target: `keys/${key.id}`, detail: { purpose: link.purpose } },
    );
    return { api_key: apiKey, tenant: tenantView(tenant!, ctx.app.config.tiers) };
  });
}

/** Reveal links are kept a week after they stopped working (a used or late link answers 404), then dropped. */
export async function dropOldLinks(q: Queryable): Promise<void> {
  await q.query(`delete from reveal_tokens where expires_at < now() - interval '7 days'`);
}
