import { z } from 'zod';
import type { OAuthApp } from '../../core/config.ts';
import type { App, AuthedCtx, PublicCtx } from '../../core/context.ts';
import { AppError, badRequest } from '../../core/errors.ts';
import { actFor, type Acting } from '../access/grants.ts';
import { inUnitOfWork } from '../../ports/db/unit-of-work.ts';
import { targetRule, type TargetRule } from '../../ports/public-target.ts';
import { providerSpec, type OAuthProvider } from '../../schemas/providers/index.ts';
import type { OAuthAppSpec } from '../../schemas/providers/provider.ts';
import { appendAudit } from '../events/audit.ts';
import { checkField, insertConnection, type ConnectionRow } from './connections.ts';
import { ProviderError, providerHttp } from './http.ts';

/** How long a person has to approve the app at the provider. */
const STATE_MINUTES = 15;
/** An access token this close to its expiry is renewed before a sync starts. */
const RENEW_BEFORE_MS = 5 * 60_000;

/** The provider's OAuth app as its spec declares it (src/schemas/providers/) and the authorize parameters it adds. */
const oauthSpec = (provider: OAuthProvider) => providerSpec(provider).oauth!;

interface State {
  provider: OAuthProvider;
  tenant_id: string;
  agent_id: string;
  collection: string;
  name: string | null;
  container_tag: string | null;
  config: Record<string, unknown>;
  expires_at: number;
}

/**
 * The callback acts as the agent that started the connection, which must still be allowed to
 * write the collection: its key may have been revoked, or its grant removed, while the person was
 * at the provider's consent page.
 */
const consent: Acting<State> = {
  subject: async (_app, state) => ({ actor: { agent_id: state.agent_id }, collection: state.collection }),
  grant: { field: 'collection', permission: 'write' },
};

function oauthApp(app: App, provider: OAuthProvider): OAuthApp {
  const configured = app.config.connectors.oauth[provider];
  if (!configured) {
    const { clientId, clientSecret } = oauthSpec(provider).app;
    throw new AppError('SERVICE_UNAVAILABLE', `OAuth for ${provider} is not configured on this server (the operator sets ${clientId} and ${clientSecret})`);
  }
  return configured;
}

const redirectUri = (origin: string | undefined, provider: OAuthProvider) => `${origin ?? ''}/v1/memory/connections/oauth/${provider}/callback`;

/**
 * The provider's consent page for a new connection. The state is sealed with the server's secrets
 * (AES-GCM: it cannot be read or changed without the master key) and carries the tenant, the
 * agent, the target collection, name and config, and its expiry.
 */
export function oauthStart(
  ctx: AuthedCtx,
  provider: OAuthProvider,
  input: { collection: string; name?: string | null; container_tag?: string | null; config?: string },
) {
  const app = oauthApp(ctx.app, provider);
  let rawConfig: unknown = {};
  if (input.config !== undefined) {
    try {
      rawConfig = JSON.parse(input.config);
    } catch {
      throw new AppError('UNPROCESSABLE_CONTENT', 'Invalid request: config: must be a JSON object', [{ path: 'config', message: 'must be a JSON object' }]);
    }
  }
  const config = checkField(providerSpec(provider).config, rawConfig, 'config', provider) as Record<string, unknown>;
  const expiresAt = Date.now() + STATE_MINUTES * 60_000;
  const state: State = {
    provider,
    tenant_id: ctx.tenant.id,
    agent_id: ctx.agent.id,
    collection: input.collection,
    name: input.name ?? null,
    container_tag: input.container_tag ?? null,
    config,
    expires_at: expiresAt,
  };
  const url = new URL(app.authorizeUrl);
  const params = {
    client_id: app.clientId,
    redirect_uri: redirectUri(ctx.origin, provider),
    state: ctx.app.secrets.encrypt(JSON.stringify(state)),
    ...oauthSpec(provider).params,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { authorize_url: url.toString(), expires_at: new Date(expiresAt).toISOString() };
}

function openState(app: App, provider: OAuthProvider, sealed: string | undefined): State {
  let state: State | null = null;
  try {
    state = sealed ? (JSON.parse(app.secrets.decrypt(sealed)) as State) : null;
  } catch {
    state = null;
  }
  if (!state || state.provider !== provider) throw badRequest('The OAuth state is missing or invalid: start the connection again');
  if (state.expires_at < Date.now()) throw badRequest('The OAuth state has expired: start the connection again');
  return state;
}

/**
 * A token endpoint's answer as far as it is used. Anything else (null, a list, a number for the
 * token, an expiry that is not a number of seconds) is the provider's fault, told as a sentence,
 * never a program error.
 */
const tokenAnswer = z.object({
  ok: z.boolean().optional(),
  error: z.string().optional(),
  access_token: z.string().min(1).optional(),
  refresh_token: z.string().min(1).optional(),
  expires_in: z
    .number()
    .positive()
    .max(10 * 365 * 86_400)
    .optional(),
});

function readTokenAnswer(provider: string, raw: unknown): z.infer<typeof tokenAnswer> {
  const read = tokenAnswer.safeParse(raw);
  if (!read.success) {
    const what =
      raw === null
        ? 'null'
        : Array.isArray(raw)
          ? 'a list'
          : typeof raw !== 'object'
            ? `a ${typeof raw}`
            : `an object whose ${read.error.issues[0]?.path.join('.')} is not valid`;
    throw new ProviderError(`${provider}'s token endpoint answered ${what}, not a token answer`);
  }
  return read.data;
}

/** The code exchanged at the provider's token endpoint, as its app's spec says the provider documents it. */
async function exchangeCode(targets: TargetRule, app: OAuthApp, provider: OAuthProvider, code: string, redirect: string): Promise<Record<string, unknown>> {
  const http = providerHttp(provider, targets);
  const raw =
    oauthSpec(provider).app.exchange === 'json-basic'
      ? await http.json<unknown>(app.tokenUrl, {
          headers: { authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}` },
          body: { grant_type: 'authorization_code', code, redirect_uri: redirect },
        })
      : await http.json<unknown>(app.tokenUrl, {
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: redirect,
            client_id: app.clientId,
            client_secret: app.clientSecret,
          }),
        });
  const answer = readTokenAnswer(provider, raw);
  if (answer.ok === false || !answer.access_token) throw new ProviderError(`${provider} refused the code: ${answer.error ?? 'no access token in the answer'}`);
  return {
    token: answer.access_token,
    ...(answer.refresh_token && { refresh_token: answer.refresh_token }),
    ...(answer.expires_in && { expires_at: new Date(Date.now() + answer.expires_in * 1000).toISOString() }),
  };
}

/**
 * The provider's redirect back: the state is checked (sealed, this provider, not expired) before
 * anything else, then the code is exchanged and the tokens stored, sealed, as a connection made by
 * the agent that started. The browser goes to the dashboard, with the connection's id or the reason it failed.
 */
export async function oauthCallback(ctx: PublicCtx, provider: OAuthProvider, input: { code?: string; state?: string; error?: string }) {
  const state = openState(ctx.app, provider, input.state);
  const dashboard = new URL(ctx.app.config.connectors.dashboardUrl ?? `${ctx.origin ?? ''}/`);
  dashboard.searchParams.set('provider', provider);
  const fail = (reason: string) => {
    dashboard.searchParams.set('oauth_error', reason);
    return { location: dashboard.toString() };
  };
  if (input.error || !input.code) return fail(input.error ?? 'no code was returned');
  const acted = await actFor(ctx.app, consent, state, ctx.requestId);
  if (!acted) return fail('the API key that started the connection is no longer valid');
  if ('refused' in acted) return fail(acted.refused);
  const agent = acted.ctx;
  try {
    const credentials = await exchangeCode(targetRule(ctx.app.config), oauthApp(ctx.app, provider), provider, input.code, redirectUri(ctx.origin, provider));
    // The connection (tenant data) commits with its audit entry (platform), as a call through invoke does.
    const connection = await inUnitOfWork(
      ctx.app.platform,
      'together',
      () =>
        agent.app.db.transaction((tx) =>
          insertConnection(tx, agent, {
            provider,
            name: state.name,
            collection: state.collection,
            container_tag: state.container_tag,
            config: state.config,
            credentials,
          }),
        ),
      (q, created) => {
        const id = (created as { id: string }).id;
        return appendAudit(q, state.tenant_id, agent.agent, { action: 'connections.oauthCallback', target: `connections/${id}`, detail: { provider, id } });
      },
    );
    dashboard.searchParams.set('connection', connection.id);
    return { location: dashboard.toString() };
  } catch (err) {
    if (err instanceof ProviderError || err instanceof AppError) return fail(err.message);
    throw err;
  }
}

/**
 * The connection's credentials for a sync. The access tokens of an app that `renews` (Google's,
 * for gdrive and gmail) last an hour: one near its expiry is renewed with the stored refresh
 * token first, and the new one stored (sealed).
 */
export async function freshCredentials(app: App, conn: ConnectionRow): Promise<Record<string, unknown>> {
  const creds = JSON.parse(app.secrets.decrypt(conn.credentials)) as Record<string, unknown>;
  const appSpec: OAuthAppSpec | undefined = providerSpec(conn.provider).oauth?.app;
  const expiresAt = typeof creds.expires_at === 'string' ? Date.parse(creds.expires_at) : NaN;
  if (!appSpec?.renews || typeof creds.refresh_token !== 'string' || !(expiresAt - Date.now() < RENEW_BEFORE_MS)) return creds;
  const configured = app.config.connectors.oauth[conn.provider as OAuthProvider];
  if (!configured)
    throw new ProviderError(`The access token has expired and cannot be renewed: the ${appSpec.name} OAuth app is not configured on this server`);
  const name = appSpec.name.toLowerCase();
  const raw = await providerHttp(name, targetRule(app.config)).json<unknown>(configured.tokenUrl, {
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: creds.refresh_token,
      client_id: configured.clientId,
      client_secret: configured.clientSecret,
    }),
  });
  const answer = readTokenAnswer(name, raw);
  if (!answer.access_token) throw new ProviderError(`${name} did not renew the access token: ${answer.error ?? 'no access token in the answer'}`);
  const renewed = { ...creds, token: answer.access_token, expires_at: new Date(Date.now() + (answer.expires_in ?? 3600) * 1000).toISOString() };
  await app.db.query('update connections set credentials = $3, updated_at = now() where tenant_id = $1 and id = $2', [
    conn.tenant_id,
    conn.id,
    app.secrets.encrypt(JSON.stringify(renewed)),
  ]);
  return renewed;
}
