import { randomBytes, randomUUID } from 'node:crypto';
import { InvalidClientError, InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { OAuthClientMetadataSchema, type OAuthClientInformationFull, type OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { App } from '../../core/context.ts';
import { outboundFetch } from '../../ports/outbound-http.ts';
import { targetRule } from '../../ports/public-target.ts';

/*
 * The clients of orgmem's authorization server (docs/mcp.md, "Remote MCP with OAuth"), both ways
 * MCP clients identify themselves: registered dynamically (RFC 7591, stored here), or a client ID
 * metadata document (the client_id is an HTTPS URL whose document describes the client, read on
 * each use through the checked HTTP client, under the rule every tenant-chosen URL obeys).
 */

/** A client as the authorization server knows it: its metadata and, for a confidential one, its secret. */
export type OAuthClient = OAuthClientInformationFull;

/** A metadata document is a few hundred bytes; anything past this is not one. */
const MAX_DOCUMENT_BYTES = 10_000;
const DOCUMENT_TIMEOUT_MS = 5_000;

/** The grant types and the one response type this server supports; a registration asking others is refused. */
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

/** The metadata a client registers or publishes, checked: redirect URIs https or loopback, our grant types only. */
function checkedMetadata(metadata: OAuthClientMetadata): OAuthClientMetadata {
  if (!metadata.redirect_uris.length) throw new InvalidClientMetadataError('redirect_uris must name at least one URI');
  for (const uri of metadata.redirect_uris) {
    const url = new URL(uri);
    if (url.hash) throw new InvalidClientMetadataError(`redirect_uri ${uri} must not have a fragment`);
    // http only back to the user's own machine (RFC 8252); custom schemes of native apps are theirs.
    if (url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
      throw new InvalidClientMetadataError(`redirect_uri ${uri} must use https (or http on a loopback address)`);
    }
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
  const parsed = OAuthClientMetadataSchema.safeParse(body);
  if (!parsed.success) throw new InvalidClientMetadataError(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  const metadata = checkedMetadata(parsed.data);
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

/** A client ID metadata document: fetched, bounded, and its client_id equal to its own URL. */
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
  let text: string;
  try {
    const res = await outboundFetch(targetRule(app.config))(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(DOCUMENT_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`it answered ${res.status}`);
    text = await boundedText(res);
  } catch (err) {
    throw new InvalidClientError(`The client's metadata document at ${clientId} could not be read: ${(err as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new InvalidClientError(`The client's metadata document at ${clientId} is not JSON`);
  }
  const parsed = OAuthClientMetadataSchema.safeParse(document);
  if (!parsed.success || (document as { client_id?: unknown }).client_id !== clientId) {
    throw new InvalidClientError(`The client's metadata document at ${clientId} is not valid: it needs redirect_uris and its own URL as client_id`);
  }
  // A document is public: no secret can be in it, so the client authenticates with PKCE alone.
  if (parsed.data.token_endpoint_auth_method && parsed.data.token_endpoint_auth_method !== 'none') {
    throw new InvalidClientError(`The client's metadata document at ${clientId} must use token_endpoint_auth_method "none"`);
  }
  try {
    return { ...checkedMetadata(parsed.data), client_id: clientId, token_endpoint_auth_method: 'none' };
  } catch (err) {
    throw new InvalidClientError(`The client's metadata document at ${clientId}: ${(err as Error).message}`);
  }
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
