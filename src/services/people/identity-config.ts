import * as oidc from 'openid-client';
import type { App, AuthedCtx } from '../../core/context.ts';
import { badRequest, notFound } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import { outboundFetch } from '../../ports/outbound-http.ts';
import { PrivateTargetError, targetRule } from '../../ports/public-target.ts';

/**
 * A tenant's OpenID Connect provider (docs/sign-in.md, "Settings"): where its people sign in, and
 * who may be made a person at a first sign-in. The client secret is sealed and never answered.
 */

export interface IdentityProvider {
  issuer: string;
  client_id: string;
  client_secret: string | null;
  allowed_domains: string[];
  allowed_groups: string[];
  groups_claim: string;
  default_role: 'admin' | 'member' | 'viewer';
}

interface ProviderRow extends Omit<IdentityProvider, 'client_secret'> {
  tenant_id: string;
  client_secret_sealed: string | null;
  updated_at: Date;
}

export interface IdentityConfigView extends Omit<IdentityProvider, 'client_secret'> {
  client_secret_set: boolean;
  updated_at: string | null;
}

/** Discovery gets this long; a provider slower than that is not one to sign in through. */
const DISCOVERY_MS = 5000;

const view = (row: ProviderRow): IdentityConfigView => ({
  issuer: row.issuer,
  client_id: row.client_id,
  client_secret_set: row.client_secret_sealed !== null,
  allowed_domains: row.allowed_domains,
  allowed_groups: row.allowed_groups,
  groups_claim: row.groups_claim,
  default_role: row.default_role,
  updated_at: iso(row.updated_at),
});

async function providerRow(app: App, tenantId: string): Promise<ProviderRow | undefined> {
  const [row] = await app.platform.query<ProviderRow>('select * from identity_providers where tenant_id = $1', [tenantId]);
  return row;
}

/** The tenant's provider with its secret unsealed, or null when none is configured. */
export async function identityProvider(app: App, tenantId: string): Promise<IdentityProvider | null> {
  const row = await providerRow(app, tenantId);
  if (!row) return null;
  return { ...view(row), client_secret: row.client_secret_sealed === null ? null : app.secrets.decrypt(row.client_secret_sealed) };
}

/**
 * The provider's discovery document read through the checked client (a tenant chose the URL:
 * production mode refuses private addresses), as openid-client's configuration. A plain-http
 * issuer is accepted outside production mode only (a provider on the operator's own machine).
 */
export async function discover(app: App, provider: Pick<IdentityProvider, 'issuer' | 'client_id' | 'client_secret'>): Promise<oidc.Configuration> {
  const fetch = outboundFetch(targetRule(app.config));
  const http = new URL(provider.issuer).protocol === 'http:';
  if (http && app.config.production) throw new PrivateTargetError('in production mode the issuer must be an https URL');
  const auth = provider.client_secret === null ? oidc.None() : oidc.ClientSecretPost(provider.client_secret);
  const config = await oidc.discovery(new URL(provider.issuer), provider.client_id, provider.client_secret ?? undefined, auth, {
    [oidc.customFetch]: (url, options) => fetch(url, { ...options, signal: options.signal ?? AbortSignal.timeout(DISCOVERY_MS) } as RequestInit),
    execute: http ? [oidc.allowInsecureRequests] : [],
    timeout: DISCOVERY_MS / 1000,
  });
  // The ID token's signature is checked against the provider's keys too, not only trusted for
  // coming over the token endpoint's connection (docs/sign-in.md, "What is checked").
  oidc.enableNonRepudiationChecks(config);
  return config;
}

export async function getIdentityConfig(ctx: AuthedCtx): Promise<IdentityConfigView | null> {
  const row = await providerRow(ctx.app, ctx.tenant.id);
  return row ? view(row) : null;
}

/** Why discovery failed, in a sentence for the admin: openid-client's message, or its cause's. */
function discoveryFailure(err: unknown): string {
  if (err instanceof PrivateTargetError) return err.message;
  const e = err as Error & { cause?: unknown };
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${e.message}${cause}`;
}

/**
 * Saves the provider once its discovery document is read (its issuer must be the one given, as
 * OpenID Connect Discovery requires). The secret kept when `client_secret` is absent; null clears it.
 */
export async function putIdentityConfig(
  ctx: AuthedCtx,
  input: Omit<IdentityProvider, 'client_secret'> & { client_secret?: string | null },
): Promise<IdentityConfigView> {
  const before = await providerRow(ctx.app, ctx.tenant.id);
  const issuer = input.issuer.replace(/\/+$/, '');
  try {
    await discover(ctx.app, { issuer, client_id: input.client_id, client_secret: null });
  } catch (err) {
    throw badRequest(`The issuer's discovery document (${issuer}/.well-known/openid-configuration) could not be used: ${discoveryFailure(err)}`);
  }
  const sealed =
    input.client_secret === undefined
      ? before && before.client_id === input.client_id
        ? before.client_secret_sealed
        : null
      : input.client_secret === null
        ? null
        : ctx.app.secrets.encrypt(input.client_secret);
  const domains = [...new Set(input.allowed_domains.map((d) => d.toLowerCase()))];
  const [row] = await ctx.app.platform.query<ProviderRow>(
    `insert into identity_providers (tenant_id, issuer, client_id, client_secret_sealed, allowed_domains, allowed_groups, groups_claim, default_role, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (tenant_id) do update set issuer = excluded.issuer, client_id = excluded.client_id, client_secret_sealed = excluded.client_secret_sealed,
       allowed_domains = excluded.allowed_domains, allowed_groups = excluded.allowed_groups, groups_claim = excluded.groups_claim,
       default_role = excluded.default_role, updated_at = excluded.updated_at
     returning *`,
    [ctx.tenant.id, issuer, input.client_id, sealed, domains, [...new Set(input.allowed_groups)], input.groups_claim, input.default_role, new Date()],
  );
  return view(row!);
}

export async function deleteIdentityConfig(ctx: AuthedCtx): Promise<void> {
  const gone = await ctx.app.platform.query('delete from identity_providers where tenant_id = $1 returning tenant_id', [ctx.tenant.id]);
  if (!gone.length) throw notFound('No identity provider is configured');
}
