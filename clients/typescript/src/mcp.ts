import { trimmed } from './client.js';

/**
 * The server's MCP endpoint (Streamable HTTP) with the key's header: the entry of `mcpServers`
 * that Cursor and other clients speaking Streamable HTTP take, and the URL and headers of the MCP
 * SDK's `StreamableHTTPClientTransport`.
 */
export function mcpServer(baseUrl: string, apiKey: string) {
  return { url: `${trimmed(baseUrl)}/v1/mcp`, headers: { Authorization: `Bearer ${apiKey}` } };
}
