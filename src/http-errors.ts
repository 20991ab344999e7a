import type { FastifyReply } from 'fastify';
import type { AppError } from './errors.ts';

/*
 * How every HTTP front end (REST, MCP over HTTP) and the server's own handlers write an error:
 * the AppError's status, its headers (Retry-After, WWW-Authenticate...) and the `{detail}` body.
 */

export function sendError(reply: FastifyReply, err: AppError) {
  return reply
    .code(err.status)
    .headers(err.headers ?? {})
    .send(err.body());
}

/**
 * The body of a request that cannot be read (malformed JSON, unsupported content type): the
 * server's parsers hand this to the route, which answers 400 with `detail`.
 */
export class UnreadableBody {
  constructor(readonly detail: string) {}
}
