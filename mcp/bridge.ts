import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { initializeAnswer, problemAnswer, type Session } from './problem.ts';

/**
 * `orgmem mcp` in front of a running server: each message from the MCP host is posted to the
 * server's Streamable HTTP endpoint with the key, and each answer written back. The endpoint is
 * stateless, so every request stands alone: one that cannot be forwarded is answered with why
 * and how to fix it, and the next one tries the server again (it may have been started since).
 * A failed initialize still opens the session, with the problem as its instructions.
 */
export async function runBridge(baseUrl: string, apiKey: string): Promise<Session> {
  const endpoint = new URL('v1/mcp', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const http = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } });
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
      const problem = explain(err, endpoint);
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
function explain(err: unknown, endpoint: URL): string {
  if (err instanceof StreamableHTTPError) {
    const body = /endpoint: (\{.*\})$/s.exec(err.message)?.[1];
    let detail = err.message;
    try {
      detail = (JSON.parse(body ?? '') as { detail?: string }).detail ?? detail;
    } catch {
      // not orgmem's {detail}: keep the SDK's words
    }
    if (err.code === 401) {
      return (
        `The server at ${endpoint.origin} refused ORGMEM_API_KEY (401: ${detail}). Fix: set ORGMEM_API_KEY to a key ` +
        'this server issued (printed at its first start, or made with orgmem admin create-tenant).'
      );
    }
    const fix = err.code === 429 || (err.code ?? 500) >= 500 ? 'try again shortly; the server log says more' : 'check that ORGMEM_URL is the address of an orgmem server, such as http://127.0.0.1:8080';
    return `The server at ${endpoint.href} answered ${err.code}: ${detail}. Fix: ${fix}.`;
  }
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return (
    `No orgmem server answers at ${endpoint.origin} (${cause?.code ?? cause?.message ?? (err as Error).message}). ` +
    'Fix: start it (orgmem serve) or correct ORGMEM_URL; without ORGMEM_URL, orgmem mcp opens the data itself.'
  );
}
