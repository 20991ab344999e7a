import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { procedures } from '../procedures/index.ts';
import type { App } from '../src/context.ts';
import { Download } from '../src/download.ts';
import { AppError } from '../src/errors.ts';
import { sendError, UnreadableBody } from '../src/http-errors.ts';
import { invoke } from '../src/invoke.ts';
import type { AnyProcedure } from '../src/procedure.ts';

export const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
const toFastifyPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * REST input mapping: path `{param}`s, then the query string for GET and DELETE (or the
 * declared `queryFields` otherwise), then the JSON body (whole, or as one field).
 */
function restInput(proc: AnyProcedure, req: FastifyRequest): unknown {
  const params = req.params as Record<string, string>;
  const query = req.query as Record<string, unknown>;
  const { method, bodyField, queryFields = [] } = proc.rest;
  const fromQuery =
    method === 'GET' || method === 'DELETE' ? query : Object.fromEntries(queryFields.filter((f) => f in query).map((f) => [f, query[f]]));
  let body: Record<string, unknown> = {};
  if (method !== 'GET' && method !== 'DELETE' && req.body !== undefined) {
    if (req.body instanceof UnreadableBody) {
      if (proc.rest.tolerant) return {};
      throw new AppError('BAD_REQUEST', req.body.detail);
    }
    if (bodyField) body = { [bodyField]: req.body };
    else if (req.body && typeof req.body === 'object' && !Array.isArray(req.body)) body = req.body as Record<string, unknown>;
    else if (!proc.rest.tolerant) throw new AppError('UNPROCESSABLE_CONTENT', 'The request body must be a JSON object', [{ path: '', message: 'expected object' }]);
  }
  return { ...body, ...fromQuery, ...params };
}

/** A file answer, streamed as it is produced (backpressure included). */
function sendDownload(reply: FastifyReply, file: Download) {
  return reply
    .header('content-type', file.contentType)
    .header('content-disposition', `attachment; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"`)
    .send(Readable.from(file.body));
}

export function registerRestRoutes(server: FastifyInstance, app: App) {
  for (const proc of procedures) {
    server.route({
      method: proc.rest.method,
      url: toFastifyPath(proc.rest.path),
      bodyLimit: proc.rest.bodyLimit,
      handler: async (req, reply) => {
        try {
          const { output, headers, status } = await invoke(app, proc, { authorization: req.headers.authorization, ip: req.ip }, restInput(proc, req));
          reply.code(status).headers(headers);
          if (output instanceof Download) return sendDownload(reply, output);
          return status === 204 ? reply.send() : reply.send(output);
        } catch (err) {
          if (proc.rest.tolerant) return reply.code(proc.rest.status).send();
          return sendError(reply, err as AppError);
        }
      },
    });
  }
}
