import { ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../src/core/errors.ts';

/** MCP's code for a resource that does not exist (the spec's, beside JSON-RPC's own). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error as the SDK sends it: `code` and `message` as they are. (An McpError's message
 * already carries "MCP error <code>:", which the client adds a second time.)
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A refusal as MCP callers read it: the status REST would answer, then the detail ("404: ..."). */
function refusal(err: unknown): { status: number; text: string } {
  // `invoke` maps every failure to an AppError; anything else is a bug of this front end.
  const status = err instanceof AppError ? err.status : 500;
  return { status, text: `${status}: ${err instanceof AppError ? err.detail : 'Internal error'}` };
}

/** A tool's failure is a result the model reads, not a protocol error. */
export function toolError(err: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: refusal(err).text }] };
}

/** A resource or prompt failure is a JSON-RPC error carrying the same text. */
export function requestError(err: unknown): RpcError {
  const { status, text } = refusal(err);
  return new RpcError(status === 404 ? RESOURCE_NOT_FOUND : status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError, text);
}
