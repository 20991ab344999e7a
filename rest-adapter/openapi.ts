import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { procedures } from '../procedures/index.ts';
import type { AnyProcedure } from '../src/procedure.ts';
import { errorResponses } from '../src/responses.ts';
import '../src/schemas/fields.ts';
import { pathParams } from './routes.ts';

const errorBody = z
  .object({
    detail: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe('Present on 422: one entry per invalid field'),
  })
  .openapi('Error');

const openaiErrorBody = errorBody
  .extend({
    error: z
      .object({ message: z.string().describe('The same as detail'), type: z.string().describe('The error code, e.g. bad_gateway') })
      .optional()
      .describe("OpenAI's error object, which OpenAI clients show (on every error the operation answers; not on an over-size body)"),
  })
  .openapi('OpenAIError');

/** The procedure's errors as OpenAPI responses: the pipeline's and its own declared ones (responses.ts). */
const errorContent = (proc: AnyProcedure) =>
  Object.fromEntries(
    errorResponses(proc).map((e) => [
      e.status,
      { description: e.description, content: { 'application/json': { schema: proc.rest.openaiErrors ? openaiErrorBody : errorBody } } },
    ]),
  );

function register(registry: OpenAPIRegistry, proc: AnyProcedure) {
  const { method, path, status, bodyField, queryFields = [], headerFields = {}, rawBody, altStatus } = proc.rest;
  const shape = proc.input.shape as Record<string, z.ZodType>;
  const params = pathParams(path);
  const inQuery = method === 'GET' || method === 'DELETE' ? Object.keys(shape).filter((k) => !params.includes(k)) : queryFields;
  const inBody = Object.keys(shape).filter((k) => !params.includes(k) && !inQuery.includes(k) && !(k in headerFields));
  const pick = (keys: string[]) => z.object(Object.fromEntries(keys.map((k) => [k, shape[k]!])));
  // A raw body is a string field of the input but a JSON object on the wire (a Stripe event).
  const bodySchema = rawBody
    ? z.record(z.string(), z.unknown()).describe(shape[rawBody]!.description ?? '')
    : bodyField
      ? shape[bodyField]!
      : pick(inBody);
  const headers = {
    ...(proc.secret && { [proc.secret.header.toLowerCase()]: z.string().describe('The shared secret of this internal endpoint') }),
    ...Object.fromEntries(Object.entries(headerFields).map(([field, header]) => [header.toLowerCase(), shape[field]!])),
  };
  const body = proc.rest.multipart
    ? { 'multipart/form-data': { schema: pick(inBody).extend({ files: z.array(z.string().openapi({ type: 'string', format: 'binary' })).describe('The files (repeat the field)') }) } }
    : { 'application/json': { schema: bodySchema } };
  const success = proc.rest.contentType ?? 'application/json';
  registry.registerPath({
    method: method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete',
    path,
    operationId: proc.name,
    summary: proc.summary,
    description: proc.description,
    tags: [proc.name.split('.')[0]!],
    security: proc.access === 'public' || proc.access === 'internal' ? [] : [{ bearer: [] }],
    request: {
      params: params.length ? pick(params) : undefined,
      query: inQuery.length ? pick(inQuery) : undefined,
      headers: Object.keys(headers).length ? z.object(headers) : undefined,
      body: inBody.length ? { required: true, content: body } : undefined,
    },
    responses: {
      [status]:
        status === 204
          ? { description: 'No content' }
          : { description: 'Success', content: { [success]: { schema: proc.output } } },
      ...(altStatus && { [altStatus.status]: { description: altStatus.description, content: { 'application/json': { schema: proc.output } } } }),
      ...errorContent(proc),
    },
  });
}

/** MCP is a front end, not a procedure, but its path is part of the /v1 contract. */
function registerMcp(registry: OpenAPIRegistry) {
  const jsonRpc = z.object({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]).optional(), method: z.string(), params: z.record(z.string(), z.unknown()).optional() });
  registry.registerPath({
    method: 'post',
    path: '/v1/mcp',
    operationId: 'mcp',
    summary: 'Model Context Protocol over Streamable HTTP (stateless, JSON responses)',
    description:
      'JSON-RPC 2.0 messages of MCP. Send `Accept: application/json, text/event-stream`. Tools: the procedures that declare one ' +
      '(store_memory, get_memory, list_collections, ...); tool arguments are the procedure inputs, and tool errors come back as ' +
      'results with `isError: true` and text "<status>: <detail>".',
    tags: ['mcp'],
    security: [{ bearer: [] }],
    request: { body: { required: true, content: { 'application/json': { schema: jsonRpc } } } },
    responses: {
      200: { description: 'JSON-RPC response', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
      202: { description: 'Accepted (notifications)' },
      401: { description: 'Missing, unknown, revoked or rotated API key', content: { 'application/json': { schema: errorBody } } },
    },
  });
}

/** The OpenAPI 3.1 document, generated from the catalogue; served at /openapi.json. */
export function openApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: `Authorization: Bearer mv_...`',
  });
  for (const proc of procedures) register(registry, proc);
  registerMcp(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'orgmem',
      version: '0.1.0',
      description:
        'Multi-tenant memory service for AI agents. Errors are `{detail}` (422 adds `errors[]`). ' +
        'Unknown JSON fields are ignored. Ids are UUIDs; timestamps are ISO 8601 UTC.',
    },
    servers: [{ url: '/' }],
  });
}
