import { randomUUID } from 'node:crypto';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SESSION_HEADER } from '../src/pipeline/call-headers.ts';
import { initializeAnswer, problemAnswer, type Session } from './problem.ts';

/**
 * How the problems of one bridge are put: its server was named by ORGMEM_URL, or found holding
 * the data directory (host/mcp-local.ts), and each has its own setting to fix.
 */
export interface BridgeTarget {
  /** The whole message for a key the server refused, from the server's reason. */
  refusedKey(detail: string): string;
  /** The fix when no server answers, or something other than an orgmem server does. */
  wrongServer: string;
}

/**
 * `orgmem mcp` in front of a running server: each message from the MCP host is posted to the
 * server's Streamable HTTP endpoint with the key, and each answer written back. The endpoint is
 * stateless, so every request stands alone: one that cannot be forwarded is answered with why
 * and how to fix it, and the next one tries the server again (it may have been started since).
 * A failed initialize still opens the session, with the problem as its instructions.
 */
export async function runBridge(baseUrl: string, apiKey: string, target: BridgeTarget): Promise<Session> {
  const endpoint = new URL('v1/mcp', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const http = new StreamableHTTPClientTransport(endpoint, {
    // This process is one session of one MCP client: the server names its calls by it in the ledger (docs/trust.md).
    requestInit: { headers: { authorization: `Bearer ${apiKey}`, [SESSION_HEADER]: `mcp-stdio:${randomUUID()}` } },
  });
  const stdio = new StdioServerTransport();

  http.onmessage = (message) => {
    // The SDK client would do this after initialize: later requests name the protocol version.
    const version = isJSONRPCResultResponse(message) && (message.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === 'string') http.setProtocolVersion(version);
    void stdio.send(message);
  };
  http.onerror = (err) => process.stderr.write(`orgmem mcp: ${err.message}\n`);
  stdio.onmessage = async (message: JSONRPCMessage) => {
    try {
      await http.send(message);
    } catch (err) {
      const problem = explain(err, endpoint, target);
      process.stderr.write(`orgmem mcp: ${problem}\n`);
      if (!isJSONRPCRequest(message)) return;
      await stdio.send(message.method === 'initialize' ? initializeAnswer(message, problem) : problemAnswer(message.id, problem));
    }
  };
  await http.start();
  await stdio.start();
  return {
    async close() {
      await stdio.close();
      await http.close();
    },
  };
}

/** The server's refusal as it put it (`{detail}`), or why no server answered; then the fix. */
function explain(err: unknown, endpoint: URL, target: BridgeTarget): string {
  if (err instanceof StreamableHTTPError) {
    const body = /endpoint: (\{.*\})$/s.exec(err.message)?.[1];
    let detail = err.message;
    try {
      detail = (JSON.parse(body ?? '') as { detail?: string }).detail ?? detail;
    } catch {
      // not orgmem's {detail}: keep the SDK's words
    }
    if (err.code === 401) return target.refusedKey(detail);
    if (err.code === 429 || (err.code ?? 500) >= 500)
      return `The server at ${endpoint.href} answered ${err.code}: ${detail}. Fix: try again shortly; the server log says more.`;
    return `The server at ${endpoint.href} answered ${err.code}: ${detail}, which an orgmem server does not. Fix: ${target.wrongServer}.`;
  }
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return `No orgmem server answers at ${endpoint.origin} (${cause?.code ?? cause?.message ?? (err as Error).message}). Fix: ${target.wrongServer}.`;
}
