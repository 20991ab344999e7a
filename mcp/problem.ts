import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ErrorCode,
  isJSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { SERVER_INFO } from './info.ts';

/**
 * What `orgmem mcp` answers when it cannot serve (no key, a wrong key, data it cannot open, a
 * server it cannot reach). MCP hosts show a process that exits, or an initialize that fails, as
 * a bare "failed" or "connection closed"; so the session opens, its instructions carry the
 * problem, and every request after it is answered with the problem and its fix.
 */
const unavailable = (problem: string) => `orgmem is not available: ${problem}`;

/** Where every setting of `orgmem mcp` is changed: the MCP client starts it with this environment only, not the user's shell's. */
export const IN_CLIENT_ENV = 'in the "env" of this MCP server in your MCP client\'s config';

export function initializeAnswer(request: JSONRPCRequest, problem: string): JSONRPCMessage {
  const asked = request.params?.protocolVersion;
  const protocolVersion = typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
  return {
    jsonrpc: '2.0',
    id: request.id,
    result: { protocolVersion, capabilities: { tools: {}, resources: {}, prompts: {} }, serverInfo: SERVER_INFO, instructions: unavailable(problem) },
  };
}

export const problemAnswer = (id: RequestId, problem: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code: ErrorCode.InternalError, message: unavailable(problem) },
});

export interface Session {
  close(): Promise<void>;
}

/** Serves nothing but the problem on stdin/stdout until the host stops; logs it once to stderr. */
export async function serveProblem(problem: string): Promise<Session> {
  process.stderr.write(`orgmem mcp: ${problem}\n`);
  const stdio = new StdioServerTransport();
  stdio.onmessage = (message) => {
    if (!isJSONRPCRequest(message)) return;
    const answer =
      message.method === 'initialize'
        ? initializeAnswer(message, problem)
        : message.method === 'ping'
          ? ({ jsonrpc: '2.0', id: message.id, result: {} } as const)
          : problemAnswer(message.id, problem);
    void stdio.send(answer);
  };
  await stdio.start();
  return stdio;
}
