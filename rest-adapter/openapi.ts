import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { procedures } from '../procedures/index.ts';
import { keyRoleOf, type AnyProcedure } from '../src/pipeline/procedure.ts';
import { ANTHROPIC_ERROR_TYPES } from '../src/pipeline/http-errors.ts';
import '../src/schemas/fields.ts';
import { restErrorResponses, restShape, type BodyShape, type RestShape } from './shape.ts';

const errorBody = z
  .object({
    detail: z.string(),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Present on 422: one entry per invalid field'),
  })
  .openapi('Error');

const openaiErrorBody = errorBody
  .extend({
    error: z
      .object({
        message: z.string().describe('The same as detail'),
        type: z.enum(['invalid_request_error', 'server_error']).describe('invalid_request_error on a 4xx, server_error on a 5xx'),
        param: z.string().nullable().describe('On a 422, the first invalid field'),
        code: z.string().describe('The error code in lower case, e.g. bad_gateway'),
      })
      .describe("OpenAI's error object, which OpenAI clients read as their API's errors"),
  })
  .openapi('OpenAIError');

const anthropicErrorBody = errorBody
  .extend({
    type: z.literal('error'),
    error: z
      .object({
        type: z.string().describe(
          `Anthropic's error type for the status: ${Object.entries(ANTHROPIC_ERROR_TYPES)
            .map(([status, type]) => `${type} (${status})`)
            .join(', ')}, otherwise invalid_request_error on a 4xx and api_error on a 5xx`,
        ),
        message: z.string().describe('The same as detail'),
      })
      .describe("Anthropic's error object, which Anthropic clients read as their API's errors"),
  })
  .openapi('AnthropicError');

const ERROR_BODIES = { openai: openaiErrorBody, anthropic: anthropicErrorBody };

/** The procedure's errors as OpenAPI responses: REST's own, the pipeline's and its declared ones (shape.ts). */
const errorContent = (proc: AnyProcedure, shape: RestShape) =>
  Object.fromEntries(
    restErrorResponses(proc, shape).map((e) => [
      e.status,
      { description: e.description, content: { 'application/json': { schema: shape.errorEnvelope ? ERROR_BODIES[shape.errorEnvelope] : errorBody } } },
    ]),
  );

type InputShape = Record<string, z.ZodType>;
const pick = (input: InputShape, keys: string[]) => z.object(Object.fromEntries(keys.map((k) => [k, input[k]!])));

/** The request body's content, when it carries any field. */
function bodyContent(body: BodyShape, input: InputShape) {
  switch (body.as) {
    // A raw body is a string field of the input but a JSON object on the wire (a Stripe event).
    case 'text':
      return { 'application/json': { schema: z.record(z.string(), z.unknown()).describe(input[body.field]!.description ?? '') } };
    case 'field':
      return { 'application/json': { schema: input[body.field]! } };
    case 'multipart': {
      const files = z.array(z.string().openapi({ type: 'string', format: 'binary' })).describe('The files (repeat the field)');
      return body.fields.length ? { 'multipart/form-data': { schema: pick(input, body.fields).extend({ files }) } } : undefined;
    }
    case 'object':
      return body.fields.length ? { 'application/json': { schema: pick(input, body.fields) } } : undefined;
  }
}

function register(registry: OpenAPIRegistry, proc: AnyProcedure) {
  const { method, path, status } = proc.rest;
  const shape = restShape(proc);
  const input = proc.input.shape as InputShape;
  const headers = {
    ...(proc.secret && { [proc.secret.header.toLowerCase()]: z.string().describe('The shared secret of this internal endpoint') }),
    ...Object.fromEntries(shape.headers.map(([field, header]) => [header.toLowerCase(), input[field]!])),
  };
  const body = shape.body && bodyContent(shape.body, input);
  const success = shape.contentType ?? 'application/json';
  const { altStatus } = shape;
  registry.registerPath({
    method: method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete',
    path,
    operationId: proc.name,
    summary: proc.summary,
    description: proc.description,
    tags: [proc.name.split('.')[0]!],
    // A key in the header its clients use (Anthropic's x-api-key) is another way in, besides the bearer token.
    security: proc.access === 'public' || proc.access === 'internal' ? [] : [{ bearer: [] }, ...(shape.apiKeyHeader ? [{ [shape.apiKeyHeader]: [] }] : [])],
    // The key role the operation needs (docs/access.md, "Key roles"), on every operation an API key calls.
    ...(proc.access !== 'public' && proc.access !== 'internal' && { 'x-key-role': keyRoleOf(proc) }),
    request: {
      params: shape.params.length ? pick(input, shape.params) : undefined,
      query: shape.query.length ? pick(input, shape.query) : undefined,
      headers: Object.keys(headers).length ? z.object(headers) : undefined,
      body: body ? { required: true, content: body } : undefined,
    },
    responses: {
      [status]: status === 204 ? { description: 'No content' } : { description: 'Success', content: { [success]: { schema: proc.output } } },
      ...(altStatus && { [altStatus.status]: { description: altStatus.description, content: { 'application/json': { schema: proc.output } } } }),
      ...errorContent(proc, shape),
    },
  });
}

/** MCP is a front end, not a procedure, but its path is part of the /v1 contract. */
function registerMcp(registry: OpenAPIRegistry) {
  const jsonRpc = z.object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string(),
    params: z.record(z.string(), z.unknown()).optional(),
  });
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
  // A header other than Authorization that some operations read a key from (options.ts, apiKeyHeader): a scheme named after it.
  for (const header of new Set(procedures.flatMap((p) => restShape(p).apiKeyHeader ?? []))) {
    registry.registerComponent('securitySchemes', header, {
      type: 'apiKey',
      in: 'header',
      name: header,
      description: `An API key in the \`${header}\` header, as the clients of the operations that list it send one (Anthropic's, to the Messages proxy)`,
    });
  }
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
