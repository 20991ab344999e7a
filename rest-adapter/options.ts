import type { z } from 'zod';
import type { ProcedureName, ProcedureNamed } from '../procedures/index.ts';
import { MAX_EMAIL_BYTES } from '../src/core/config.ts';
import { PROXY_BODY_LIMIT } from '../src/schemas/proxy.ts';
import type { ErrorEnvelope } from '../src/pipeline/http-errors.ts';
import type { Procedure } from '../src/pipeline/procedure.ts';

/**
 * How REST reads a procedure's input and answers, beyond its method, path and status (which every
 * front end shares: `Procedure.rest`). `F` is the procedure's input field names, `In` its parsed
 * input; both are erased (`any`, as in `AnyProcedure`) where the options of any procedure are read.
 * Read through `restShape` (shape.ts), never directly.
 */
export interface RestOptions<F extends string = string, In = any> {
  /** The JSON body is this one input field (a bare array body such as bulk create). */
  bodyField?: F;
  /** Input fields read from the query string on a POST/PUT/PATCH (e.g. remember's `sync`). */
  queryFields?: F[];
  /** A second success status and the input that selects it (remember: sync=true answers 200, not 202). */
  altStatus?: { status: number; description: string; when: (input: In) => boolean };
  /** Answers the procedure's status whatever the body and outcome, but a 429 (the pageview beacon). */
  tolerant?: boolean;
  /** A larger request body than the server's default allows, in bytes (account import). */
  bodyLimit?: number;
  /**
   * The body is multipart/form-data: its file parts become the input's `files` (see
   * schemas/files.ts) and its text fields the other input fields. JSON with base64 files is
   * accepted as well, which is how tRPC callers send them.
   */
  multipart?: boolean;
  /**
   * Error bodies also carry this API's error envelope beside `detail` (OpenAI's `error: {message,
   * type, param, code}`, Anthropic's `type: "error", error: {type, message}`), so that its
   * official clients raise them as its own errors (the chat proxies).
   */
  errorEnvelope?: ErrorEnvelope;
  /**
   * A request header that carries the API key when there is no Authorization header: Anthropic's
   * clients send theirs in `x-api-key` (the Messages proxy).
   */
  apiKeyHeader?: string;
  /** The answer is a redirect (status 302, 303...) to the output's `location` (an OAuth callback). */
  redirect?: boolean;
  /** Input fields read from request headers, each with the header that carries it (`{signature: 'Stripe-Signature'}`). */
  headerFields?: { [K in F]?: string };
  /**
   * The input field that receives the JSON body as the text that arrived, not parsed: for a
   * receiver that checks a signature over the exact bytes (Stripe's webhook), which parsing
   * and serializing again would not give back. Still application/json only.
   */
  rawBody?: F;
  /**
   * The success body is the output, a string, sent as this content type instead of JSON
   * (Prometheus' text format). Other front ends answer the string as they answer any output.
   */
  contentType?: string;
}

/** The options a procedure may have, its field names and input checked against its own input. */
type OptionsFor<P> = P extends Procedure<infer I, any, any, any> ? RestOptions<keyof I['shape'] & string, z.output<I>> : never;

/** The procedures that have any, by name; every other procedure is read and answered the plain way. */
export const restOptions: { [N in ProcedureName]?: OptionsFor<ProcedureNamed<N>> } = {
  'memories.bulk': { bodyField: 'items' },
  'memories.upload': { multipart: true },
  'memories.folder': { multipart: true },
  'memories.attach': { multipart: true },
  'drop.files': {
    multipart: true,
    queryFields: ['async_ingest'],
    altStatus: { status: 202, description: 'async_ingest=true: the files are queued', when: (input) => input.async_ingest },
  },
  'drop.presign': { bodyField: 'uploads' },
  'drop.complete': { bodyField: 'files' },
  'connections.oauthCallback': { redirect: true },
  'email.inbound': {
    // Sized for the largest message in base64 with line breaks (76 characters + CRLF per 57 bytes), plus the envelope.
    bodyLimit: Math.ceil(MAX_EMAIL_BYTES / 57) * 78 + 65_536,
  },
  'graph.remember': {
    queryFields: ['sync'],
    headerFields: { idempotency_key: 'Idempotency-Key' },
    altStatus: { status: 200, description: 'sync=true: the facts as stored', when: (input) => input.sync },
  },
  'proxy.chatCompletions': { errorEnvelope: 'openai', bodyLimit: PROXY_BODY_LIMIT },
  'proxy.messages': {
    errorEnvelope: 'anthropic',
    bodyLimit: PROXY_BODY_LIMIT,
    apiKeyHeader: 'x-api-key',
    headerFields: { anthropic_version: 'anthropic-version', anthropic_beta: 'anthropic-beta' },
  },
  'proxy.responses': { errorEnvelope: 'openai', bodyLimit: PROXY_BODY_LIMIT },
  'proxy.countTokens': {
    errorEnvelope: 'anthropic',
    bodyLimit: PROXY_BODY_LIMIT,
    apiKeyHeader: 'x-api-key',
    headerFields: { anthropic_version: 'anthropic-version', anthropic_beta: 'anthropic-beta' },
  },
  'billing.webhook': { rawBody: 'payload', headerFields: { signature: 'Stripe-Signature' } },
  // An export file of a large account is far beyond the usual 8 MB; larger ones import in parts.
  'admin.import': { bodyLimit: 64 * 1024 * 1024, headerFields: { idempotency_key: 'Idempotency-Key' } },
  'admin.metricsPrometheus': { contentType: 'text/plain; version=0.0.4; charset=utf-8' },
  'system.pulse': { tolerant: true },
  'system.track': { tolerant: true },
};
