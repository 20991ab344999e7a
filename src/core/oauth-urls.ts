import { isIP } from 'node:net';
import { parseHostPort, type Config, type HostPort } from './config.ts';
import { AppError } from './errors.ts';

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

/** Where a request says it was sent (a fastify request has these): its scheme, Host header and the port it came in on. */
export interface RequestOrigin {
  protocol: string;
  host: string | undefined;
  socket: { localPort?: number };
}

/** The names of this machine that the default of ORGMEM_ALLOWED_HOSTS lists. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** ORGMEM_ALLOWED_HOSTS, else the loopback names and HOST (unless it is every interface), on the port the request came in on. */
function allowedHosts(config: Pick<Config, 'allowedHosts' | 'host'>, port: number | undefined): HostPort[] {
  if (config.allowedHosts) return config.allowedHosts;
  const names = [...LOOPBACK_NAMES];
  if (config.host !== '0.0.0.0' && config.host !== '::') names.push(isIP(config.host) === 6 ? `[${config.host}]` : config.host.toLowerCase());
  return names.map((host) => ({ host, port }));
}

const urlsFrom = (base: string): OAuthUrls => {
  const issuer = base.replace(/\/+$/, '');
  return { issuer, resource: `${issuer}${MCP_PATH}`, resourceMetadata: `${issuer}/.well-known/oauth-protected-resource${MCP_PATH}` };
};

/**
 * The URLs from the server's base (docs/mcp.md, "Behind a proxy"): ORGMEM_PUBLIC_URL when set
 * (what clients reach). Unset, the origin the request was addressed to, but only when its Host is
 * an allowed one: the Host header is the client's to write, and a document naming whatever host
 * a request claimed would send clients there. Production mode needs ORGMEM_PUBLIC_URL. Otherwise
 * the refusal, as an error to answer.
 */
export function oauthUrls(config: Pick<Config, 'publicUrl' | 'production' | 'allowedHosts' | 'host'>, req: RequestOrigin): OAuthUrls | AppError {
  if (config.publicUrl) return urlsFrom(config.publicUrl);
  if (config.production) {
    return new AppError('SERVICE_UNAVAILABLE', 'OAuth is off: in production mode it needs ORGMEM_PUBLIC_URL, the address clients reach this server at');
  }
  const named = parseHostPort(req.host ?? '');
  const port = named?.port ?? (req.protocol === 'https' ? 443 : 80);
  if (named && allowedHosts(config, req.socket.localPort).some((a) => a.host === named.host && (a.port === undefined || a.port === port))) {
    return urlsFrom(`${req.protocol}://${req.host}`);
  }
  return new AppError(
    'BAD_REQUEST',
    `The Host header ${JSON.stringify((req.host ?? '').slice(0, 300))} is not one this server answers OAuth for: set ORGMEM_PUBLIC_URL to the address clients reach it at, or list the host in ORGMEM_ALLOWED_HOSTS`,
  );
}
