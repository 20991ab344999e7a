import { ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../src/core/errors.ts';

/** MCP's code for a resource that does not exist (the spec's, beside JSON-RPC's own). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error as the SDK sends it: `code`, `message` and `data` as they are. (An McpError's
 * message already carries "MCP error <code>:", which the client adds a second time.) Ours carry the
 * detail REST would answer as the message and again in `data`, with REST's status
 * (docs/contract.md, "Errors").
 */
export class RpcError extends Error {
  readonly data: { status: number; detail: string };
  constructor(
    readonly code: number,
    detail: string,
    status: number,
  ) {
    super(detail);
    this.data = { status, detail };
  }
}

/** A refusal as MCP callers read it: the status REST would answer, and the detail. */
function refusal(err: unknown): { status: number; detail: string } {
  // `invoke` maps every failure to an AppError; anything else is a bug of this front end.
  return err instanceof AppError ? { status: err.status, detail: err.detail } : { status: 500, detail: 'Internal error' };
}

/** A tool's failure is a result the model reads, not a protocol error: the status, then the detail ("404: ..."). */
export function toolError(err: unknown): CallToolResult {
  const { status, detail } = refusal(err);
  return { isError: true, content: [{ type: 'text', text: `${status}: ${detail}` }] };
}

/** MCP's code for a call over the key's rate limit (a server error of JSON-RPC's implementation-defined range). */
const RATE_LIMITED = -32029;

/** A resource or prompt failure, or a call of a batch over the rate limit, is a JSON-RPC error. */
export function requestError(err: unknown): RpcError {
  const { status, detail } = refusal(err);
  const code = status === 404 ? RESOURCE_NOT_FOUND : status === 429 ? RATE_LIMITED : status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new RpcError(code, detail, status);
}
