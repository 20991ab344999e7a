import { randomBytes, randomUUID } from 'node:crypto';
import { InvalidClientError, InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { OAuthClientMetadataSchema, SafeUrlSchema, type OAuthClientInformationFull, type OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import type { App } from '../../core/context.ts';
import { outboundFetch } from '../../ports/outbound-http.ts';
import { anonymousRule } from '../../ports/public-target.ts';

/*
 * The clients of orgmem's authorization server (docs/mcp.md, "Remote MCP with OAuth"), both ways
 * MCP clients identify themselves: registered dynamically (RFC 7591, stored here), or a client ID
 * metadata document (the client_id is an HTTPS URL whose document describes the client, read on
 * each use through the checked HTTP client, under the rule for addresses anyone may name).
 */

/** A client as the authorization server knows it: its metadata and, for a confidential one, its secret. */
export type OAuthClient = OAuthClientInformationFull;

// What one client may register or publish (docs/mcp.md, "Client registration"): anyone may
// register, and what is registered is kept, so every field has a bound.
/** The registration request's body, whole. */
export const REGISTRATION_MAX_BYTES = 16_384;
/** A metadata document is a few hundred bytes; anything past this is not one. */
const MAX_DOCUMENT_BYTES = 10_000;
const DOCUMENT_TIMEOUT_MS = 5_000;
const REDIRECT_URIS_MAX = 10;
const URI_MAX = 2_048;
const NAME_MAX = 200;
/** Entries of grant_types, response_types and contacts. */
const LIST_MAX = 10;
/** A grant type, response type, auth method, software id or version. */
const WORD_MAX = 100;
const CONTACT_MAX = 320;
const SCOPE_MAX = 1_000;

/** Text a jsonb column can keep (no NUL, no unpaired surrogate), of at most `max` characters. */
const text = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine(
      (s) => !/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s),
      'must not contain NUL or an unpaired UTF-16 surrogate',
    );
const uri = text(URI_MAX).pipe(SafeUrlSchema);
/** An optional URI that may also be sent empty, as the SDK's schema takes logo_uri and tos_uri. */
const optionalUri = z.union([z.literal('').transform(() => undefined), uri]).optional();
const list = (item: z.ZodType<string>) => z.array(item).max(LIST_MAX, `must have at most ${LIST_MAX} entries`);

/**
 * RFC 7591 client metadata with those bounds. `jwks`, `jwks_uri` and `software_statement` are
 * left out (not stored, not answered): this server authenticates no client by key and checks no
 * software statement, which RFC 7591 lets it ignore.
 */
const ClientMetadata = OAuthClientMetadataSchema.omit({ jwks: true, jwks_uri: true, software_statement: true }).extend({
  redirect_uris: z.array(uri).min(1, 'must name at least one URI').max(REDIRECT_URIS_MAX, `must have at most ${REDIRECT_URIS_MAX} entries`),
  token_endpoint_auth_method: text(WORD_MAX).optional(),
  grant_types: list(text(WORD_MAX)).optional(),
  response_types: list(text(WORD_MAX)).optional(),
  client_name: text(NAME_MAX).optional(),
  client_uri: uri.optional(),
  logo_uri: optionalUri,
  scope: text(SCOPE_MAX).optional(),
  contacts: list(text(CONTACT_MAX)).optional(),
  tos_uri: optionalUri,
  policy_uri: text(URI_MAX).optional(),
  software_id: text(WORD_MAX).optional(),
  software_version: text(WORD_MAX).optional(),
});

/** The first message of a zod failure, as an OAuth error description; `whole` names what was parsed. */
export const firstIssue = (error: z.ZodError, whole = 'body') => `${error.issues[0]!.path.join('.') || whole}: ${error.issues[0]!.message}`;

/** The grant types and the one response type this server supports; a registration asking others is refused. */
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** The hosts plain http may redirect to: the user's own machine (RFC 8252, "Loopback Interface Redirection"). */
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];
/** Native clients' own schemes that are no reverse domain name (docs/mcp.md, "Redirect URIs"): Cursor's. */
const CLIENT_SCHEMES = ['cursor:'];

/**
 * Why the browser may not be sent to `uri`, or undefined (docs/mcp.md, "Redirect URIs"): https;
 * http to a loopback host; a native app's private-use scheme, a reverse domain name such as
 * `com.example.app:` (RFC 8252, "Private-Use URI Scheme Redirection") or one of CLIENT_SCHEMES;
 * never a fragment (RFC 6749, 3.1.2). Anything else (file:, blob:, data:, javascript:, ws:...) is
 * a page of the browser's own or of another origin, not the client.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect_uri ${uri} is not a URL`;
  }
  if (uri.includes('#')) return `redirect_uri ${uri} must not have a fragment`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.includes(url.hostname) ? undefined : `redirect_uri ${uri} must use https (http only to localhost, 127.0.0.1 or [::1])`;
  }
  if (url.protocol.includes('.') || CLIENT_SCHEMES.includes(url.protocol)) return undefined;
  return `redirect_uri ${uri} uses the scheme ${url.protocol} it may not: use https, http to a loopback address, or a native app's own scheme (a reverse domain name such as com.example.app:, or ${CLIENT_SCHEMES.join(' ')})`;
}

/** The metadata a client registers or publishes, checked: bounded, redirect URIs as above, our grant types only. */
function checkedMetadata(body: unknown): OAuthClientMetadata {
  const parsed = ClientMetadata.safeParse(body);
  if (!parsed.success) throw new InvalidClientMetadataError(firstIssue(parsed.error));
  const metadata = parsed.data;
  for (const uri of metadata.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidClientMetadataError(problem);
  }
  const unsupported = (metadata.grant_types ?? []).filter((g) => !GRANT_TYPES.includes(g));
  if (unsupported.length) throw new InvalidClientMetadataError(`Unsupported grant_types: ${unsupported.join(', ')} (supported: ${GRANT_TYPES.join(', ')})`);
  if ((metadata.response_types ?? ['code']).some((r) => r !== 'code')) throw new InvalidClientMetadataError('Only the response type "code" is supported');
  const method = metadata.token_endpoint_auth_method;
  if (method && method !== 'none' && method !== 'client_secret_post' && method !== 'client_secret_basic') {
    throw new InvalidClientMetadataError(`Unsupported token_endpoint_auth_method ${method} (supported: none, client_secret_post, client_secret_basic)`);
  }
  return metadata;
}

/**
 * Registers a client (RFC 7591). A confidential client gets a secret (kept sealed), a public one
 * (`token_endpoint_auth_method: none`) none. The answer omits what is unset rather than sending
 * null: one major client refuses nulls.
 */
export async function registerClient(app: App, body: unknown): Promise<OAuthClient> {
  const metadata = checkedMetadata(body);
  const isPublic = metadata.token_endpoint_auth_method === 'none';
  const secret = isPublic ? undefined : randomBytes(32).toString('base64url');
  const client: OAuthClient = {
    ...metadata,
    token_endpoint_auth_method: metadata.token_endpoint_auth_method ?? 'client_secret_basic',
    client_id: randomUUID(),
    client_id_issued_at: Math.floor(Date.now() / 1000),
    ...(secret && { client_secret: secret, client_secret_expires_at: 0 }),
  };
  const { client_secret: _secret, ...stored } = client;
  await app.platform.query('insert into oauth_clients (id, metadata, secret_sealed) values ($1, $2::jsonb, $3)', [
    client.client_id,
    stored,
    secret ? app.secrets.encrypt(secret) : null,
  ]);
  return client;
}

/** How long a registered client with no authorization request and no token is kept (docs/mcp.md, "Remote MCP with OAuth"). */
export const UNAUTHORIZED_CLIENT_DAYS = 7;

/**
 * Drops registered clients that have held no authorization request and no token for
 * UNAUTHORIZED_CLIENT_DAYS since they registered: registrations never completed (anyone may
 * register), and clients whose every grant ended and was cleared, which register again.
 */
export async function dropUnauthorizedClients(app: App): Promise<number> {
  const rows = await app.platform.query(
    `delete from oauth_clients c where c.created_at < now() - make_interval(days => $1)
        and not exists (select 1 from oauth_requests r where r.client_id = c.id)
        and not exists (select 1 from oauth_tokens t where t.client_id = c.id)
      returning id`,
    [UNAUTHORIZED_CLIENT_DAYS],
  );
  return rows.length;
}

/** A client_id that names a metadata document rather than a registered client. */
const isDocumentUrl = (clientId: string) => /^https:\/\//i.test(clientId);

/**
 * The client behind a client_id: a registered one, or the one its metadata document describes;
 * an unknown id, or a document that cannot be read or is not a valid one, is `invalid_client`.
 */
export async function findClient(app: App, clientId: string): Promise<OAuthClient> {
  if (isDocumentUrl(clientId)) return readDocument(app, clientId);
  const [row] = await app.platform.query<{ metadata: OAuthClient; secret_sealed: string | null }>(
    'select metadata, secret_sealed from oauth_clients where id = $1',
    [clientId.slice(0, 200)],
  );
  if (!row) throw new InvalidClientError('Unknown client_id: register the client first (registration_endpoint)');
  return { ...row.metadata, ...(row.secret_sealed && { client_secret: app.secrets.decrypt(row.secret_sealed) }) };
}

/**
 * A client ID metadata document: fetched, bounded, and its client_id equal to its own URL. Anyone
 * may name one, without a key: it is fetched under the anonymous rule (public addresses only, in
 * every mode), and why it could not be read is logged for the operator, never answered: the
 * answer of whatever the URL reached is not the caller's to learn.
 */
async function readDocument(app: App, clientId: string): Promise<OAuthClient> {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new InvalidClientError('client_id is not a valid URL');
  }
  if (url.pathname === '/' || url.hash || url.username || url.password) {
    throw new InvalidClientError('A client_id URL must have a path and no fragment or credentials');
  }
  let document: unknown;
  try {
    const res = await outboundFetch(anonymousRule(app.config))(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`it answered ${res.status}`);
    }
    document = JSON.parse(await boundedText(res));
  } catch (err) {
    app.log.info({ client_id: clientId, reason: (err as Error).message }, 'client metadata document not read');
    throw new InvalidClientError(
      `The client's metadata document at ${clientId} could not be used: it must answer 200 from a public address within ${DOCUMENT_TIMEOUT_MS / 1000} seconds, with at most ${MAX_DOCUMENT_BYTES} bytes of JSON`,
    );
  }
  if ((document as { client_id?: unknown } | null)?.client_id !== clientId) {
    throw new InvalidClientError(`The client's metadata document at ${clientId} is not valid: its client_id must be its own URL`);
  }
  let metadata: OAuthClientMetadata;
  try {
    metadata = checkedMetadata(document);
  } catch (err) {
    throw new InvalidClientError(`The client's metadata document at ${clientId} is not valid: ${(err as Error).message}`);
  }
  // A document is public: no secret can be in it, so the client authenticates with PKCE alone.
  if (metadata.token_endpoint_auth_method && metadata.token_endpoint_auth_method !== 'none') {
    throw new InvalidClientError(`The client's metadata document at ${clientId} must use token_endpoint_auth_method "none"`);
  }
  return { ...metadata, client_id: clientId, token_endpoint_auth_method: 'none' };
}

async function boundedText(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_DOCUMENT_BYTES) {
      await reader.cancel();
      throw new Error(`it is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
