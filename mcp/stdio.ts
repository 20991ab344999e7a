import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { App } from '../src/core/context.ts';
import { authenticateRequest } from '../src/pipeline/invoke.ts';
import { buildMcpServer } from './server.ts';

/**
 * MCP over this process's stdin/stdout for one API key: every tool call runs as that key. A
 * wrong key throws here, before the protocol starts, so the caller can answer the MCP host with
 * the reason (mcp/problem.ts) rather than serve tools that all answer 401.
 */
export async function serveStdio(app: App, apiKey: string): Promise<McpServer> {
  const authorization = `Bearer ${apiKey}`;
  await authenticateRequest(app, authorization, {});
  // This process is one session of one MCP client: its calls are named by it in the ledger (docs/trust.md).
  const server = buildMcpServer(app, { authorization, via: 'mcp', session: `mcp-stdio:${randomUUID()}` });
  await server.connect(new StdioServerTransport());
  return server;
}
