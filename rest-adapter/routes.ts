import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { procedures } from '../procedures/index.ts';
import type { App } from '../src/context.ts';
import { Download } from '../src/download.ts';
import { AppError } from '../src/errors.ts';
import { sendError, UnreadableBody } from '../src/http-errors.ts';
import { invoke, readsInput } from '../src/invoke.ts';
import { MAX_FILE_BYTES, MAX_FILES, type FileUploadInput } from '../src/schemas/files.ts';
import type { AnyProcedure } from '../src/procedure.ts';

export const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
const toFastifyPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes its JSON body as text (`rest.rawBody`): the server's JSON parser leaves it unparsed. */
    rawBody?: boolean;
  }
}

/**
 * REST input mapping: path `{param}`s, then the query string for GET and DELETE (or the
 * declared `queryFields` otherwise), then the declared `headerFields`, then the JSON body (whole,
 * as one field, or as its text for a `rawBody` procedure).
 */
async function restInput(proc: AnyProcedure, req: FastifyRequest): Promise<unknown> {
  const params = req.params as Record<string, string>;
  const query = req.query as Record<string, unknown>;
  const { method, bodyField, queryFields = [], headerFields = {}, rawBody } = proc.rest;
  const fromQuery =
    method === 'GET' || method === 'DELETE' ? query : Object.fromEntries(queryFields.filter((f) => f in query).map((f) => [f, query[f]]));
  const fromHeaders = Object.fromEntries(
    Object.entries(headerFields).flatMap(([field, header]) => {
      const value = req.headers[header.toLowerCase()];
      return typeof value === 'string' ? [[field, value]] : [];
    }),
  );
  let body: Record<string, unknown> = {};
  if (proc.rest.multipart && req.isMultipart()) body = await multipartBody(req);
  else if (method !== 'GET' && method !== 'DELETE' && req.body !== undefined) {
    let value: unknown = req.body;
    if (value instanceof UnreadableBody) {
      if (!proc.rest.tolerant) throw new AppError('BAD_REQUEST', value.detail);
      value = value.tolerated;
    }
    if (rawBody) body = { [rawBody]: value };
    else if (bodyField) body = { [bodyField]: value };
    else if (value && typeof value === 'object' && !Array.isArray(value)) body = value as Record<string, unknown>;
    // A body that is not an object is refused only where there are fields to read from it.
    else if (readsInput(proc)) throw new AppError('UNPROCESSABLE_CONTENT', 'The request body must be a JSON object', [{ path: '', message: 'expected object' }]);
  }
  // No body at all is still a text to check (and to refuse), not a missing field.
  if (rawBody) body[rawBody] ??= '';
  return { ...body, ...fromHeaders, ...fromQuery, ...params };
}

/**
 * A multipart body as input: file parts (any field name) become `files`, text fields the other
 * fields. A file is read up to one byte over MAX_FILE_BYTES and the rest is discarded as it
 * streams, so an oversize file is recognised (and fails alone) without being held in memory;
 * a file past MAX_FILES stops the reading at once (422).
 */
async function multipartBody(req: FastifyRequest): Promise<Record<string, unknown>> {
  const fields: Record<string, unknown> = {};
  const files: FileUploadInput[] = [];
  try {
    const parts = req.parts({ limits: { fileSize: MAX_FILE_BYTES + 1, files: MAX_FILES, fieldSize: 1024 * 1024 } });
    for await (const part of parts) {
      if (part.type === 'file') files.push({ filename: part.filename || 'file', content_type: part.mimetype, data: await part.toBuffer() });
      else fields[part.fieldname] = part.value;
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'FST_FILES_LIMIT') {
      throw new AppError('UNPROCESSABLE_CONTENT', `At most ${MAX_FILES} files per request`, [{ path: 'files', message: `at most ${MAX_FILES} files` }]);
    }
    throw new AppError('BAD_REQUEST', `The multipart body cannot be read: ${(err as Error).message}`);
  }
  return { ...fields, files };
}

/** A file answer, streamed as it is produced (backpressure included). */
function sendDownload(reply: FastifyReply, file: Download) {
  return reply
    .header('content-type', file.contentType)
    .header('content-disposition', `attachment; filename="${file.filename.replace(/["\\\r\n]/g, '_')}"`)
    .send(Readable.from(file.body));
}

function secretOf(proc: AnyProcedure, req: FastifyRequest): string | undefined {
  const value = proc.secret && req.headers[proc.secret.header.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

export function registerRestRoutes(server: FastifyInstance, app: App) {
  for (const proc of procedures) {
    server.route({
      method: proc.rest.method,
      url: toFastifyPath(proc.rest.path),
      bodyLimit: proc.rest.bodyLimit,
      config: { rawBody: !!proc.rest.rawBody },
      handler: async (req, reply) => {
        try {
          const caller = { authorization: req.headers.authorization, ip: req.ip, origin: `${req.protocol}://${req.host}`, secret: secretOf(proc, req) };
          const { output, headers, status } = await invoke(app, proc, caller, await restInput(proc, req));
          reply.code(status).headers(headers);
          if (output instanceof Download) return sendDownload(reply, output);
          if (proc.rest.redirect) return reply.redirect((output as { location: string }).location, status);
          if (proc.rest.contentType) return reply.type(proc.rest.contentType).send(output);
          return status === 204 ? reply.send() : reply.send(output);
        } catch (err) {
          if (proc.rest.tolerant) return reply.code(proc.rest.status).send();
          return sendError(reply, err as AppError, { openai: proc.rest.openaiErrors });
        }
      },
    });
  }
}
