import * as oidc from 'openid-client';
import type { App } from '../../core/context.ts';
import { AppError, badRequest, forbidden, notFound } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { hashKey } from '../access/keys.ts';
import { createSession } from '../access/sessions.ts';
import { discover, identityProvider } from './identity-config.ts';
import { provision, type ProvisionedPerson } from './provision.ts';

/**
 * Sign-in with the tenant's OpenID Connect provider (docs/sign-in.md): the authorization code flow
 * with PKCE (S256), a state used once and a nonce, the ID token validated by openid-client
 * (issuer, audience, expiry, nonce, signature by the provider's keys), then the person provisioned
 * and a session opened. Every refusal is an AppError whose detail says why.
 */

/** How long the provider has to send the browser back. */
const SIGNIN_SECONDS = 600;

/** Where the browser goes when the sign-in asked for nowhere in particular. */
export const DEFAULT_RETURN = '/collections';

/**
 * A path of the dashboard, or null: only a same-origin path (not `//host`, not `/\host`, which
 * browsers read as another host) may be gone back to after signing in.
 */
export function sameOriginPath(value: string | undefined): string | null {
  if (value === undefined || value === '') return DEFAULT_RETURN;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || /[\u0000-\u001f\\]/.test(value)) return null;
  const base = 'http://orgmem.invalid';
  const url = new URL(value, base);
  return url.origin === base ? `${url.pathname}${url.search}${url.hash}` : null;
}

/**
 * The tenant a sign-in is for: the one named (which, given an e-mail too, must be one that e-mail
 * may sign in to), or the one whose allowed domains hold the e-mail's domain or that has a person
 * with that e-mail. None: 404; several: 400, naming the organization id as the way out.
 */
async function tenantFor(app: App, tenant: string | undefined, email: string | undefined): Promise<string> {
  if (tenant !== undefined && !isUuid(tenant)) throw notFound('No organization has this id');
  const domain = email?.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (email !== undefined && (!domain || !email.includes('@'))) throw badRequest('email must be an e-mail address such as ana@example.com');
  const rows = await app.platform.query<{ tenant_id: string }>(
    `select i.tenant_id from identity_providers i
      where ($1::uuid is null or i.tenant_id = $1::uuid)
        and ($2::text is null or $3 = any(i.allowed_domains)
             or exists (select 1 from people p where p.tenant_id = i.tenant_id and lower(p.email) = lower($2)))`,
    [tenant ?? null, email ?? null, domain ?? null],
  );
  if (rows.length === 1) return rows[0]!.tenant_id;
  if (rows.length > 1) throw badRequest(`Several organizations sign in ${domain} addresses: sign in with your organization id`);
  if (tenant !== undefined && email !== undefined) throw forbidden(`${email} may not sign in to this organization`);
  throw notFound(
    tenant !== undefined ? 'This organization signs in with API keys only: it has no identity provider' : `No organization signs in ${domain} addresses`,
  );
}

/**
 * Starts a sign-in: the URL of the provider's authorization endpoint to send the browser to.
 * `callback` is this server's callback URL, as the provider knows it.
 */
export async function startSignin(app: App, input: { tenant?: string; email?: string; return_to?: string }, callback: string): Promise<string> {
  const returnTo = sameOriginPath(input.return_to);
  if (returnTo === null) throw badRequest('return_to must be a path of this dashboard, such as /collections');
  if (input.tenant === undefined && input.email === undefined) throw badRequest('Give tenant (your organization id) or email');
  const tenantId = await tenantFor(app, input.tenant, input.email);
  const provider = (await identityProvider(app, tenantId))!;
  const config = await discoverOrRefuse(app, provider);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const verifier = oidc.randomPKCECodeVerifier();
  const now = new Date();
  // Sign-ins never finished are dropped as new ones start.
  await app.platform.query('delete from oidc_signins where expires_at < $1', [now]);
  await app.platform.query('insert into oidc_signins (state_hash, tenant_id, nonce, code_verifier, return_to, expires_at) values ($1, $2, $3, $4, $5, $6)', [
    hashKey(state),
    tenantId,
    nonce,
    verifier,
    returnTo,
    new Date(now.getTime() + SIGNIN_SECONDS * 1000),
  ]);
  const params: Record<string, string> = {
    redirect_uri: callback,
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  if (input.email) params.login_hint = input.email;
  return oidc.buildAuthorizationUrl(config, params).href;
}

async function discoverOrRefuse(app: App, provider: Parameters<typeof discover>[1]): Promise<oidc.Configuration> {
  try {
    return await discover(app, provider);
  } catch (err) {
    app.log.warn({ err, issuer: provider.issuer }, 'identity provider discovery failed');
    throw new AppError('BAD_GATEWAY', `The identity provider ${provider.issuer} cannot be reached now: try again later`);
  }
}

export interface SignedIn {
  person: ProvisionedPerson;
  tenant_id: string;
  session: { token: string; csrf: string; expires_at: Date };
  return_to: string;
}

/**
 * The provider's answer at the callback: `url` is the callback URL as the browser reached it (this
 * server's public callback with the query it came with). The state is taken once, whatever
 * follows; then the code exchanged and the ID token validated, the e-mail required verified, the
 * person provisioned and a session opened.
 */
export async function finishSignin(app: App, url: URL): Promise<SignedIn> {
  const state = url.searchParams.get('state');
  if (!state) throw badRequest('The provider sent no state: start the sign-in again');
  const [pending] = await app.platform.query<{ tenant_id: string; nonce: string; code_verifier: string; return_to: string; live: boolean }>(
    'delete from oidc_signins where state_hash = $1 returning tenant_id, nonce, code_verifier, return_to, expires_at > $2 as live',
    [hashKey(state), new Date()],
  );
  if (!pending?.live) throw badRequest('This sign-in is unknown, already used or expired: start it again');
  const error = url.searchParams.get('error');
  if (error) throw forbidden(`The identity provider refused the sign-in: ${url.searchParams.get('error_description') ?? error}`);
  const provider = await identityProvider(app, pending.tenant_id);
  if (!provider) throw notFound('This organization no longer has an identity provider');
  const config = await discoverOrRefuse(app, provider);
  let claims: oidc.IDToken;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, url, {
      pkceCodeVerifier: pending.code_verifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims()!;
  } catch (err) {
    throw badRequest(`The identity provider's answer was refused: ${refusalOf(err)}`);
  }
  if (typeof claims.email !== 'string' || !claims.email.includes('@'))
    throw forbidden('The ID token carries no e-mail: the provider must release the email scope');
  if (claims.email_verified !== true) throw forbidden(`${claims.email} is not verified by the identity provider`);
  const groups = groupsOf(claims[provider.groups_claim]);
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : '';
  return app.platform.transaction(async (tx) => {
    const person = await provision(tx, pending.tenant_id, provider, { subject: claims.sub, email: claims.email as string, name, groups });
    const session = await createSession(tx, pending.tenant_id, person.id);
    return { person, tenant_id: pending.tenant_id, session, return_to: pending.return_to };
  });
}

/** The group claim as strings: a list, or one group as a string; anything else is no group. */
function groupsOf(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  return Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : [];
}

/** openid-client's reason (the check that failed, or the provider's error when it sent one), never a stack. */
function refusalOf(err: unknown): string {
  if (err instanceof oidc.ResponseBodyError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  if (!(err instanceof Error)) return String(err);
  // openid-client's own message is general ("unexpected JWT claim value encountered"); its cause names the claim.
  return err.cause instanceof Error ? err.cause.message : err.message;
}
