/** The MCP endpoint: the one resource orgmem's OAuth tokens are issued for (docs/mcp.md, "Remote MCP with OAuth"). */
export const MCP_PATH = '/v1/mcp';

/** What a client may ask for: reading memories, and writing them too. */
export const SCOPES = ['memory:read', 'memory:write'] as const;

/** Where this server is reached, for OAuth: the issuer, the resource tokens are for, and its metadata. */
export interface OAuthUrls {
  /** The authorization server's issuer: the server's base URL, no trailing slash (RFC 8414). */
  issuer: string;
  /** The canonical URL of the MCP endpoint, the audience of every token (RFC 8707). */
  resource: string;
  /** The protected resource metadata of the MCP endpoint (RFC 9728, the path-suffixed form). */
  resourceMetadata: string;
}

/**
 * The URLs from the server's base: ORGMEM_PUBLIC_URL when set (behind a proxy, what clients
 * reach), else the origin the request was addressed to.
 */
export function oauthUrls(publicUrl: string | undefined, origin: string): OAuthUrls {
  const issuer = (publicUrl ?? origin).replace(/\/+$/, '');
  return { issuer, resource: `${issuer}${MCP_PATH}`, resourceMetadata: `${issuer}/.well-known/oauth-protected-resource${MCP_PATH}` };
}
