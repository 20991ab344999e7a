import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { procedures } from '../procedures/index.ts';
import type { App } from '../src/core/context.ts';
import { Download } from '../src/core/download.ts';
import { EventStream } from '../src/core/event-stream.ts';
import { AppError, invalidInput } from '../src/core/errors.ts';
import { sendError, UnreadableBody, type ErrorEnvelope } from '../src/pipeline/http-errors.ts';
import { callMarks } from '../src/pipeline/call-headers.ts';
import { invoke } from '../src/pipeline/invoke.ts';
import { validatesInput, type AnyProcedure } from '../src/pipeline/procedure.ts';
import { MAX_FILE_BYTES, MAX_FILES, type FileUploadInput } from '../src/schemas/files.ts';
import { restShape, successStatus, type RestShape } from './shape.ts';

const toFastifyPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes its JSON body as text (a `rawBody` procedure, options.ts): the server's JSON parser leaves it unparsed. */
    rawBody?: boolean;
    /** The API whose error envelope the route's error bodies carry (options.ts), those the server's handlers answer for it included (an over-size body). */
    errorEnvelope?: ErrorEnvelope;
  }
}

/**
 * REST input mapping, as the shape says (shape.ts): the JSON body (whole, as one field, or as its
 * text) or the multipart one, then the header fields, then the query fields, then the path's.
 */
async function restInput(proc: AnyProcedure, shape: RestShape, req: FastifyRequest): Promise<unknown> {
  const query = req.query as Record<string, unknown>;
  const fromQuery = Object.fromEntries(shape.query.filter((f) => Object.hasOwn(query, f)).map((f) => [f, query[f]]));
  const fromHeaders = Object.fromEntries(
    shape.headers.flatMap(([field, header]) => {
      const value = req.headers[header.toLowerCase()];
      return typeof value === 'string' ? [[field, value]] : [];
    }),
  );
  const { body: carries, tolerant } = shape;
  let body: Record<string, unknown> = {};
  if (carries?.as === 'multipart' && req.isMultipart()) body = await multipartBody(req);
  else if (carries && req.body !== undefined) {
    let value: unknown = req.body;
    if (value instanceof UnreadableBody) {
      if (!tolerant) throw new AppError('BAD_REQUEST', value.detail);
      value = value.tolerated;
    }
    if (carries.as === 'text' || carries.as === 'field') body = { [carries.field]: value };
    else if (value && typeof value === 'object' && !Array.isArray(value)) body = value as Record<string, unknown>;
    // A body that is not an object is refused only where the input can fail (validatesInput).
    else if (validatesInput(proc))
      throw new AppError('UNPROCESSABLE_CONTENT', 'The request body must be a JSON object', [{ path: '', message: 'expected object' }]);
  }
  // No body at all is still a text to check (and to refuse), not a missing field.
  if (carries?.as === 'text') body[carries.field] ??= '';
  return { ...body, ...fromHeaders, ...fromQuery, ...(req.params as Record<string, string>) };
}

/**
 * A validation failure in the terms of the request: where the body is one input field (a bare
 * array), the paths start at the array ("3.text"), not at the field ("items.3.text").
 */
function inRequestTerms(shape: RestShape, err: AppError): AppError {
  if (shape.body?.as !== 'field' || err.code !== 'UNPROCESSABLE_CONTENT' || !err.errors) return err;
  const { field } = shape.body;
  const inBody = (path: string) => (path === field ? '' : path.startsWith(`${field}.`) ? path.slice(field.length + 1) : path);
  if (err.errors.every((e) => inBody(e.path) === e.path)) return err;
  return invalidInput(
    err.errors.map((e) => ({ ...e, path: inBody(e.path) })),
    err.headers,
  );
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

/**
 * Server-sent events as they are produced. A client that leaves before the end (the response closes
 * unfinished) aborts the stream, so its producer stops and lets go of what it holds (an upstream request).
 */
function sendEvents(reply: FastifyReply, events: EventStream) {
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) events.abort();
  });
  return reply
    .headers(events.headers)
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .send(Readable.from(events.body, { objectMode: false }));
}

/** The Authorization header, else a key sent the way the procedure's clients send one (Anthropic's `x-api-key`) as a bearer token. */
function authorizationOf(shape: RestShape, req: FastifyRequest): string | undefined {
  if (req.headers.authorization !== undefined || !shape.apiKeyHeader) return req.headers.authorization;
  const key = req.headers[shape.apiKeyHeader];
  return typeof key === 'string' ? `Bearer ${key}` : undefined;
}

function secretOf(proc: AnyProcedure, req: FastifyRequest): string | undefined {
  const value = proc.secret && req.headers[proc.secret.header.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

export function registerRestRoutes(server: FastifyInstance, app: App) {
  for (const proc of procedures) {
    const shape = restShape(proc);
    server.route({
      method: proc.rest.method,
      url: toFastifyPath(proc.rest.path),
      bodyLimit: shape.bodyLimit,
      config: { rawBody: shape.body?.as === 'text', errorEnvelope: shape.errorEnvelope },
      handler: async (req, reply) => {
        try {
          const caller = {
            authorization: authorizationOf(shape, req),
            ip: req.ip,
            origin: `${req.protocol}://${req.host}`,
            secret: secretOf(proc, req),
            events: true,
            via: 'rest' as const,
            ...callMarks(req.headers),
          };
          const { output, headers, input } = await invoke(app, proc, caller, await restInput(proc, shape, req));
          const status = successStatus(shape, input);
          reply.code(status).headers(headers);
          if (output instanceof Download) return sendDownload(reply, output);
          if (output instanceof EventStream) return sendEvents(reply, output);
          if (shape.redirect) return reply.redirect((output as { location: string }).location, status);
          if (shape.contentType) return reply.type(shape.contentType).send(output);
          return status === 204 ? reply.send() : reply.send(output);
        } catch (err) {
          // A tolerant route (the beacon) answers its own status whatever happened, but its budget's 429:
          // a client past it is told to wait.
          if (shape.tolerant && (err as AppError).code !== 'TOO_MANY_REQUESTS') return reply.code(shape.status).send();
          return sendError(reply, inRequestTerms(shape, err as AppError), shape.errorEnvelope);
        }
      },
    });
  }
}
