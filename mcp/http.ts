import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode, isJSONRPCRequest, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { MCP_PATH, oauthUrls, SCOPES } from '../src/core/oauth-urls.ts';
import { sendError, UnreadableBody } from '../src/pipeline/http-errors.ts';
import { callMarks } from '../src/pipeline/call-headers.ts';
import { authenticateRequest } from '../src/pipeline/invoke.ts';
import { requestError } from './results.ts';
import { buildMcpServer } from './server.ts';

/** The JSON-RPC calls (requests, not notifications) a POST carries; a body that is none still counts one. */
const callsIn = (body: unknown) => Math.max(1, (Array.isArray(body) ? body : [body]).filter((m) => isJSONRPCRequest(m)).length);

/**
 * Why a body cannot be handed to the transport, or null: answered here as a JSON-RPC error with our
 * `data: {status, detail}` (docs/contract.md, "Errors"), where the transport's own has no detail.
 */
function unreadable(body: unknown): { code: number; detail: string } | null {
  if (body instanceof UnreadableBody) return { code: ErrorCode.ParseError, detail: body.detail };
  const messages = Array.isArray(body) ? body : [body];
  if (!messages.length || messages.some((m) => !JSONRPCMessageSchema.safeParse(m).success)) {
    return { code: ErrorCode.InvalidRequest, detail: 'The body is not a JSON-RPC message or a batch of them' };
  }
  return null;
}

/** The request as the transport reads it: its headers and address (the body is handed over already parsed). */
function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, { method: req.method, headers });
}

/**
 * Sends the transport's answer. Its own refusals (a protocol version it does not speak, an Accept
 * or Content-Type header it does not take, a batch too large) are JSON-RPC errors without our
 * `data: {status, detail}`: they get it here, like every other error (docs/contract.md, "Errors").
 */
async function send(reply: FastifyReply, answer: Response) {
  reply.code(answer.status);
  answer.headers.forEach((value, name) => void reply.header(name, value));
  const text = await answer.text();
  if (answer.status < 400 || !text) return reply.send(text);
  const body = JSON.parse(text) as { error?: { message?: string; data?: unknown } };
  if (body.error && typeof body.error.message === 'string' && body.error.data === undefined) {
    body.error.data = { status: answer.status, detail: body.error.message };
  }
  return reply.send(JSON.stringify(body));
}

/**
 * Browser-based MCP clients call from another origin: they may send the headers MCP uses and
 * read the ones that tell them where to authorize and how much is left of the rate limit.
 */
function allowAnyOrigin(reply: FastifyReply) {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-allow-headers', 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id');
  reply.header('access-control-allow-methods', 'POST, OPTIONS');
  reply.header(
    'access-control-expose-headers',
    'www-authenticate, mcp-session-id, mcp-protocol-version, ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after',
  );
}

/**
 * Streamable HTTP at POST /v1/mcp, stateless: each request gets its own server and
 * transport, so any API process can answer any request and nothing is kept between them.
 * Its protocol revisions are the SDK's (docs/mcp.md).
 */
export function registerMcpHttp(server: FastifyInstance, app: App) {
  server.post(MCP_PATH, async (req, reply) => {
    allowAnyOrigin(reply);
    // Authenticate the HTTP request once, before speaking MCP, counting each JSON-RPC call of a
    // batch against the rate limit (docs/contract.md, "Rate limits"): a bad key or token is a 401
    // whose WWW-Authenticate points at where to get a token (RFC 9728), no call within the limit
    // a 429; the tools then run as this agent. An OAuth token is accepted here, its audience.
    // A Host OAuth does not answer for (src/core/oauth-urls.ts) takes keys only, and its challenge names no metadata.
    const headers: Record<string, string> = {};
    const urls = oauthUrls(app.config, req);
    const known = urls instanceof AppError ? undefined : urls;
    let auth;
    try {
      auth = await authenticateRequest(app, req.headers.authorization, headers, callsIn(req.body), known?.resource);
    } catch (err) {
      const e = err as AppError;
      const params = [
        ...(known ? [`resource_metadata="${known.resourceMetadata}"`] : []),
        `scope="${SCOPES.join(' ')}"`,
        ...(req.headers.authorization ? ['error="invalid_token"'] : []),
      ];
      const challenge: Record<string, string> = e.code === 'UNAUTHORIZED' ? { 'WWW-Authenticate': `Bearer ${params.join(', ')}` } : {};
      return sendError(reply, new AppError(e.code, e.detail, e.errors, { ...headers, ...e.headers, ...challenge }));
    }
    const refused = unreadable(req.body);
    if (refused) {
      const { code, detail } = refused;
      return reply
        .code(400)
        .headers(headers)
        .send({ jsonrpc: '2.0', id: null, error: { code, message: detail, data: { status: 400, detail } } });
    }
    reply.headers(headers);
    const mcp = buildMcpServer(app, {
      authorization: req.headers.authorization,
      ip: req.ip,
      auth: { tenant: auth.tenant, agent: auth.agent, database: auth.database },
      via: 'mcp',
      // The server keeps no sessions (each request is one); a client's own session id names its calls.
      ...callMarks(req.headers, req.headers['mcp-session-id']),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    // The calls past the limit are answered here, each with its JSON-RPC error; the first ones run.
    const serve = transport.onmessage!;
    let left = auth.within;
    transport.onmessage = (message, extra) => {
      if (!isJSONRPCRequest(message) || left-- > 0) return serve(message, extra);
      const { code, message: detail, data } = requestError(auth.refusal());
      void transport.send({ jsonrpc: '2.0', id: message.id, error: { code, message: detail, data } });
    };
    return send(reply, await transport.handleRequest(webRequest(req), { parsedBody: req.body }));
  });
  const notAllowed = async (_req: unknown, reply: FastifyReply) =>
    sendError(reply.header('Allow', 'POST'), new AppError('METHOD_NOT_SUPPORTED', 'This MCP endpoint is stateless: use POST'));
  server.get(MCP_PATH, notAllowed);
  server.delete(MCP_PATH, notAllowed);
  server.options(MCP_PATH, async (_req, reply) => {
    allowAnyOrigin(reply);
    return reply.code(204).send();
  });
}
