import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { sendError } from '../src/pipeline/http-errors.ts';
import { authenticateRequest } from '../src/pipeline/invoke.ts';
import { buildMcpServer } from './server.ts';

/**
 * Streamable HTTP at POST /v1/mcp, stateless: each request gets its own server and
 * transport, so any API process can answer any request and nothing is kept between them.
 */
export function registerMcpHttp(server: FastifyInstance, app: App) {
  server.post('/v1/mcp', async (req, reply) => {
    // Authenticate and rate-limit the HTTP request once, before speaking MCP: a bad key is a
    // 401 + WWW-Authenticate, too many requests a 429; the tools then run as this agent.
    const headers: Record<string, string> = {};
    let auth;
    try {
      auth = await authenticateRequest(app, req.headers.authorization, headers);
    } catch (err) {
      const e = err as AppError;
      return sendError(reply, new AppError(e.code, e.detail, e.errors, { ...headers, ...e.headers }));
    }
    for (const [name, value] of Object.entries(headers)) reply.raw.setHeader(name, value);
    const mcp = buildMcpServer(app, {
      authorization: req.headers.authorization,
      ip: req.ip,
      auth: { tenant: auth.tenant, agent: auth.agent, database: auth.database },
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    reply.hijack();
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });
  const notAllowed = async (_req: unknown, reply: import('fastify').FastifyReply) =>
    sendError(reply.header('Allow', 'POST'), new AppError('METHOD_NOT_SUPPORTED', 'This MCP endpoint is stateless: use POST'));
  server.get('/v1/mcp', notAllowed);
  server.delete('/v1/mcp', notAllowed);
}
