import type { z } from 'zod';
import type { Config } from './config.ts';
import type { AuthedCtx, PublicCtx } from './context.ts';
import type { Download } from './download.ts';
import type { ErrorCode } from './errors.ts';
import type { CommitMode } from './ports/db/unit-of-work.ts';

/** `internal`: no API key; the caller proves itself with the procedure's shared `secret`. */
export type Access = 'public' | 'read' | 'write' | 'admin' | 'internal';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One operation of the service, as plain data. REST + OpenAPI, tRPC and MCP are walked from
 * these fields; nothing else describes an endpoint.
 */
export interface Procedure<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
  A extends Access = Access,
  M extends HttpMethod = HttpMethod,
> {
  /** `resource.verb`, also the tRPC path. */
  name: string;
  summary: string;
  description?: string;
  rest: {
    method: M;
    /** OpenAPI-style path; `{param}`s are fields of `input`. */
    path: string;
    status: number;
    /** The JSON body is this one input field (a bare array body such as bulk create). */
    bodyField?: string;
    /** Input fields read from the query string on a POST/PUT/PATCH (e.g. remember's `sync`). */
    queryFields?: string[];
    /** A second success status and the input that selects it (remember: sync=true answers 200, not 202). */
    altStatus?: { status: number; description: string; when: (input: z.output<I>) => boolean };
    /** Answers `status` whatever the body and outcome (the pageview beacon). */
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
     * Error bodies also carry OpenAI's `error: {message, type}` beside `detail`, so that OpenAI
     * clients show the reason (the chat proxy).
     */
    openaiErrors?: boolean;
    /** The answer is a redirect (status 302, 303...) to the output's `location` (an OAuth callback). */
    redirect?: boolean;
    /** Input fields read from request headers, each with the header that carries it (`{signature: 'Stripe-Signature'}`). */
    headerFields?: Record<string, string>;
    /**
     * The input field that receives the JSON body as the text that arrived, not parsed: for a
     * receiver that checks a signature over the exact bytes (Stripe's webhook), which parsing
     * and serializing again would not give back. Still application/json only.
     */
    rawBody?: string;
    /**
     * The success body is the output, a string, sent as this content type instead of JSON
     * (Prometheus' text format). Other front ends answer the string as they answer any output.
     */
    contentType?: string;
  };
  /**
   * For `internal` procedures: the request header carrying the shared secret, and the configured
   * value it must equal. Unset or not matching: 401.
   */
  secret?: { header: string; value: (config: Config) => string | undefined };
  /** `read`/`write`: any authenticated key, writes refused to read-only keys. */
  access: A;
  /**
   * The input field naming a collection whose grants apply, and the permission it needs.
   * Procedures touching a second collection (move) name that field in `alsoWrite`.
   */
  collection?: {
    field: string;
    permission: 'read' | 'write';
    alsoWrite?: string;
    /**
     * For a procedure naming a record that belongs to a collection (a connection) rather than the
     * collection: finds the record's collection (404 when the tenant has no such record).
     */
    of?: (ctx: AuthedCtx, input: z.output<I>) => Promise<string>;
  };
  /**
   * A write whose input can make it change nothing (a dry run): with such input it is a read,
   * so read-only keys and keys granted only read on the collection may call it, and it is not
   * audited.
   */
  readWhen?: (input: z.output<I>) => boolean;
  /**
   * How a write commits with its audit entry (src/ports/db/unit-of-work.ts): all its writes in
   * one transaction with the entry (the default), or, for the calls that commit in steps on
   * purpose, each step on its own with the entry in the first.
   */
  commits?: CommitMode;
  /**
   * Exposed as an MCP tool: its name, a short title for people, and a description that tells the
   * model when to call it. Reads are read-only tools; `destructive`: the call may delete or hide
   * memories; `idempotent`: repeating the call with the same arguments changes nothing more.
   */
  mcp?: { tool: string; title: string; description: string; destructive?: boolean; idempotent?: boolean };
  /**
   * The errors the operation itself answers, and when: those beyond what its access and input
   * rules give every procedure (responses.ts adds those). OpenAPI documents both; invoke logs
   * any other error a handler throws as a broken contract.
   */
  errors?: Partial<Record<ErrorCode, string>>;
  input: I;
  output: O;
  /** Answers the output, or a Download (a streamed file, REST only) that `output` describes. */
  handler: (ctx: A extends 'public' | 'internal' ? PublicCtx : AuthedCtx, input: z.output<I>) => Promise<z.input<O> | Download>;
}

// Procedures are stored together in the catalogue, so their generic parameters are erased there.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyProcedure = Procedure<any, any, any, any>;

/** Identity helper that keeps a procedure's literal types for the tRPC router type. */
export function defineProcedure<I extends z.ZodObject, O extends z.ZodType, A extends Access, M extends HttpMethod>(
  p: Procedure<I, O, A, M>,
): Procedure<I, O, A, M> {
  return p;
}

/**
 * A read procedure never changes state: a query in tRPC, allowed for read-only keys.
 * (`trpc/router.ts` mirrors this rule at the type level.)
 */
export const isRead = (p: AnyProcedure) => p.access === 'read' || (p.access === 'public' && p.rest.method === 'GET');
