import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { procedures } from '../procedures/index.ts';
import type { App } from '../src/context.ts';
import type { AppError } from '../src/errors.ts';
import { invoke, type Caller } from '../src/invoke.ts';
import { isRead } from '../src/procedure.ts';

/**
 * An MCP server whose tools are the catalogue's procedures that declare `mcp`. Calls go
 * through `invoke` with the caller's key, so tools obey the same access rules as REST.
 */
export function buildMcpServer(app: App, caller: Caller): McpServer {
  const server = new McpServer({ name: 'orgmem', version: '0.1.0' });
  for (const proc of procedures) {
    if (!proc.mcp) continue;
    server.registerTool(
      proc.mcp.tool,
      {
        description: proc.mcp.description ?? proc.summary,
        inputSchema: proc.input.shape,
        annotations: { readOnlyHint: isRead(proc), destructiveHint: proc.rest.method === 'DELETE' },
      },
      async (args: Record<string, unknown>) => {
        try {
          const { output } = await invoke(app, proc, caller, args);
          // MCP structured content must be an object; the REST shape stays a bare array.
          const structured = (Array.isArray(output) ? { items: output } : output) as Record<string, unknown>;
          return { content: [{ type: 'text' as const, text: JSON.stringify(structured) }], structuredContent: structured };
        } catch (err) {
          const e = err as AppError;
          return { isError: true, content: [{ type: 'text' as const, text: `${e.status ?? 500}: ${e.detail ?? String(err)}` }] };
        }
      },
    );
  }
  return server;
}
