import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { sendError } from '../rest-adapter/routes.ts';
import type { App } from '../src/context.ts';
import { AppError } from '../src/errors.ts';
import { authenticate } from '../src/services/keys.ts';
import { buildMcpServer } from './server.ts';

/**
 * Streamable HTTP at POST /v1/mcp, stateless: each request gets its own server and
 * transport, so any API process can answer any request and nothing is kept between them.
 */
export function registerMcpHttp(server: FastifyInstance, app: App) {
  server.post('/v1/mcp', async (req, reply) => {
    try {
      // Reject a bad key at the HTTP level (401 + WWW-Authenticate) before speaking MCP.
      await authenticate(app, req.headers.authorization);
    } catch (err) {
      return sendError(reply, err as AppError);
    }
    const mcp = buildMcpServer(app, { authorization: req.headers.authorization, ip: req.ip });
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
    sendError(reply.header('Allow', 'POST'), new AppError('BAD_REQUEST', 'This MCP endpoint is stateless: use POST'));
  server.get('/v1/mcp', notAllowed);
  server.delete('/v1/mcp', notAllowed);
}
