import type { FastifyReply } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AppError } from '../core/errors.ts';

/*
 * How every HTTP front end (REST, MCP over HTTP) and the server's own handlers write an error:
 * the AppError's status, its headers (Retry-After, WWW-Authenticate...) and the `{detail}` body
 * (on a raw socket too, when the request never became one), with an API's envelope beside it on
 * the chat proxies' routes.
 */

export function sendError(reply: FastifyReply, err: AppError, envelope?: ErrorEnvelope) {
  return reply
    .code(err.status)
    .headers(err.headers ?? {})
    .send(errorBody(err, envelope));
}

/**
 * An API whose error envelope a route's error bodies also carry, beside `detail`, so that the
 * API's official clients read them as its own errors (the chat proxies: docs/proxy.md, "Errors").
 */
export type ErrorEnvelope = 'openai' | 'anthropic';

/** Anthropic's error type for each status orgmem answers that has one of its own; any other is invalid_request_error (4xx) or api_error (5xx). */
export const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  504: 'timeout_error',
};

export function errorBody(err: AppError, envelope?: ErrorEnvelope) {
  const fault = err.status < 500 ? 'client' : 'server';
  switch (envelope) {
    case 'openai':
      // OpenAI's own types: the client's fault or the server's; orgmem's error code as `code`.
      return {
        ...err.body(),
        error: {
          message: err.detail,
          type: fault === 'client' ? 'invalid_request_error' : 'server_error',
          param: err.errors?.[0]?.path ?? null,
          code: err.code.toLowerCase(),
        },
      };
    case 'anthropic':
      return {
        ...err.body(),
        type: 'error',
        error: { type: ANTHROPIC_ERROR_TYPES[err.status] ?? (fault === 'client' ? 'invalid_request_error' : 'api_error'), message: err.detail },
      };
    default:
      return err.body();
  }
}

/**
 * The body of a request that cannot be read (malformed JSON, unsupported content type): the
 * server's parsers hand this to the route, which answers 400 with `detail`, unless it is
 * tolerant (the beacon) and reads what it can: `tolerated`, a text/plain body.
 */
export class UnreadableBody {
  constructor(
    readonly detail: string,
    readonly tolerated?: unknown,
  ) {}
}

/**
 * The most the request line and headers may hold, in bytes: four times Node's default, so that an
 * oversized credential (a 60 kB bearer token) reaches authentication and is a 401 there
 * (docs/contract.md, "Errors"), while a request past it is still refused before it is read.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The answer to a connection Node's HTTP parser gives up on before fastify sees a request
 * (headers over the limit, a request too slow to arrive, bytes that are not HTTP): written on
 * the socket, still `{detail}` JSON, and the connection closed.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes`]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request did not arrive in time']
        : [400, 'The request cannot be read as HTTP'];
  const body = JSON.stringify({ detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
