import type { ErrorEnvelope } from '../src/pipeline/http-errors.ts';
import type { AnyProcedure } from '../src/pipeline/procedure.ts';
import { errorResponses, type ErrorReasons } from '../src/pipeline/responses.ts';
import { restOptions, type RestOptions } from './options.ts';

export const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** How a request body carries input fields. */
export type BodyShape =
  /** A JSON object holding these input fields. */
  | { as: 'object'; fields: string[] }
  /** multipart/form-data (file parts are `files`, text parts the other fields), or a JSON object holding them, as tRPC callers send files. */
  | { as: 'multipart'; fields: string[] }
  /** The JSON body is this one input field (a bare array). */
  | { as: 'field'; field: string }
  /** This input field receives the JSON body's text as it arrived. */
  | { as: 'text'; field: string };

/** A procedure as REST serves it: the one reading of its options (options.ts) for the routes, the OpenAPI document and the error listing. */
export interface RestShape {
  /** Input fields from the path's `{param}`s. */
  params: string[];
  /** Input fields from the query string. */
  query: string[];
  /** Input fields from request headers, each with its header. */
  headers: Array<[field: string, header: string]>;
  /** The input fields the body carries, on a method that has one. */
  body?: BodyShape;
  status: number;
  /** A second success status and the input that selects it. */
  altStatus?: RestOptions['altStatus'];
  /** Answers `status` whatever the body and outcome. */
  tolerant: boolean;
  /** The request body limit in bytes, when not the server's. */
  bodyLimit?: number;
  /** The content type of a string output sent as is, when not JSON. */
  contentType?: string;
  /** The answer is a redirect to the output's `location`. */
  redirect: boolean;
  /** The API whose error envelope error bodies carry too. */
  errorEnvelope?: ErrorEnvelope;
  /** A request header (lowercase) that carries an API key when there is no Authorization header. */
  apiKeyHeader?: string;
}

export function restShape(proc: AnyProcedure): RestShape {
  const options: RestOptions = (restOptions as Partial<Record<string, RestOptions>>)[proc.name] ?? {};
  const { method, path, status } = proc.rest;
  const fields = Object.keys(proc.input.shape);
  const params = pathParams(path);
  const headers = Object.entries(options.headerFields ?? {}) as Array<[string, string]>;
  // GET and DELETE have no body: what is not in the path is in the query string.
  const hasBody = method !== 'GET' && method !== 'DELETE';
  const query = hasBody ? (options.queryFields ?? []) : fields.filter((f) => !params.includes(f));
  const inBody = fields.filter((f) => !params.includes(f) && !query.includes(f) && !headers.some(([field]) => field === f));
  const body: BodyShape | undefined = !hasBody
    ? undefined
    : options.rawBody
      ? { as: 'text', field: options.rawBody }
      : options.bodyField
        ? { as: 'field', field: options.bodyField }
        : { as: options.multipart ? 'multipart' : 'object', fields: inBody };
  return {
    params,
    query,
    headers,
    body,
    status,
    altStatus: options.altStatus,
    tolerant: !!options.tolerant,
    bodyLimit: options.bodyLimit,
    contentType: options.contentType,
    redirect: !!options.redirect,
    errorEnvelope: options.errorEnvelope,
    apiKeyHeader: options.apiKeyHeader?.toLowerCase(),
  };
}

/** The status of a success: the alternative one when the (parsed) input selects it. */
export const successStatus = (shape: RestShape, input: unknown) => (shape.altStatus?.when(input) ? shape.altStatus.status : shape.status);

/**
 * The errors REST answers before the pipeline is reached: a request it cannot read (host/server.ts's
 * parsers, routes.ts) and, on a method with a body, one over the limit. A tolerant route (the
 * beacon) reads whatever it is sent, so neither applies.
 */
function unreadRequests(shape: RestShape): ErrorReasons {
  if (shape.tolerant) return {};
  return {
    BAD_REQUEST: [
      shape.body?.as === 'multipart'
        ? 'The request cannot be read (a malformed URL, a broken multipart or JSON body, another content type)'
        : 'The request cannot be read (a malformed URL or JSON body, a content type other than JSON)',
    ],
    ...(shape.body && { PAYLOAD_TOO_LARGE: ['The request body is larger than the limit'] }),
  };
}

/** Every error a procedure answers over REST: these, then the pipeline's and its declared ones (src/pipeline/responses.ts). */
export const restErrorResponses = (proc: AnyProcedure, shape = restShape(proc)) => errorResponses(proc, unreadRequests(shape));
