import type { z } from 'zod';
import type { Config } from '../core/config.ts';
import type { AuthedCtx, PublicCtx } from '../core/context.ts';
import type { Download } from '../core/download.ts';
import type { EventStream } from '../core/event-stream.ts';
import type { ErrorCode } from '../core/errors.ts';
import type { CommitMode } from '../ports/db/unit-of-work.ts';
import type { KeyRole } from '../schemas/access.ts';
import type { GrantRules, Grants } from '../services/access/grants.ts';

/** `internal`: no API key; the caller proves itself with the procedure's shared `secret`. */
export type Access = 'public' | 'read' | 'write' | 'admin' | 'internal';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One operation of the service, as plain data. REST + OpenAPI, tRPC and MCP are walked from
 * these fields; nothing else describes an endpoint.
 */
export interface Procedure<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType, A extends Access = Access, M extends HttpMethod = HttpMethod> {
  /** `resource.verb`, also the tRPC path. */
  name: string;
  summary: string;
  description?: string;
  /** What names the operation on every front end (REST's route, the metrics' label, tRPC's pointer to a download). */
  rest: {
    method: M;
    /** OpenAPI-style path; `{param}`s are fields of `input`. */
    path: string;
    /** The success status. How REST reads the input and answers beyond that is the REST adapter's (rest-adapter/options.ts). */
    status: number;
  };
  /**
   * For `internal` procedures: the request header carrying the shared secret, and the configured
   * value it must equal. Unset or not matching: 401.
   */
  secret?: { header: string; value: (config: Config) => string | undefined };
  /** `read`/`write`: any authenticated key, writes refused to read-only keys. */
  access: A;
  /**
   * `admin`: only the tenant's admin keys may call it (docs/access.md, "Key roles"): the
   * tenant-wide settings that route or expose data. Unset: any key of the tenant, within its grants.
   */
  keyRole?: Extract<KeyRole, 'admin'>;
  /**
   * With `keyRole: 'admin'`: a caller that acts for a person (docs/people.md) may call it too, for
   * themselves, whatever their role: what it makes acts for them and reads at most what they read
   * (their own keys, an MCP client they approve).
   */
  forPerson?: true;
  /**
   * The collections the call touches and the permission it needs on each (services/access/grants.ts),
   * resolved by `invoke` before the handler runs: a 403 for a collection refused, unless the rule
   * is partial (the handler is then told, through its `grants`, which collections it may touch).
   */
  collection?: GrantRules<z.output<I>>;
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
  /** A procedure that is a front end of its own (the chat proxies): the ledger names it so (docs/trust.md). */
  frontEnd?: 'proxy';
  mcp?: { tool: string; title: string; description: string; destructive?: boolean; idempotent?: boolean };
  /**
   * The errors the operation itself answers, and when: those beyond what its access and input
   * rules give every procedure (responses.ts adds those). OpenAPI documents both; invoke logs
   * any other error a handler throws as a broken contract.
   */
  errors?: Partial<Record<ErrorCode, string>>;
  /**
   * Whether this input asks for server-sent events (a chat proxy's `stream: true`), which only
   * REST sends: `invoke` refuses it from any other front end with a 400 before the handler runs,
   * so nothing is stored or sent upstream for an answer that could not be delivered.
   */
  streams?: (input: z.output<I>) => boolean;
  input: I;
  output: O;
  /**
   * Answers the output, or a Download (a streamed file, REST only) that `output` describes, or an
   * EventStream (server-sent events, REST only).
   * `grants`: what `collection`'s rules allowed (only a partial rule's handler needs to ask).
   */
  handler: (ctx: A extends 'public' | 'internal' ? PublicCtx : AuthedCtx, input: z.output<I>, grants: Grants) => Promise<z.input<O> | Download | EventStream>;
}

// Procedures are stored together in the catalogue, so their generic parameters are erased there (`any`, not `unknown`:
// a handler's input type must stay assignable both ways).
export type AnyProcedure = Procedure<any, any, any, any>;

/** Identity helper that keeps a procedure's literal types for the tRPC router type. */
export function defineProcedure<I extends z.ZodObject, O extends z.ZodType, A extends Access, M extends HttpMethod>(
  p: Procedure<I, O, A, M>,
): Procedure<I, O, A, M> {
  return p;
}

/**
 * A read procedure never changes state: a query in tRPC, allowed for read-only keys, never
 * audited (docs/contract.md, "Read-only keys"). `read` says so; `public` and the operator's
 * `admin` say only who may call, so there the GET method decides: the operator's reports are
 * reads, and reading them writes no audit entry. (`trpc/router.ts` mirrors this rule at the type level.)
 */
export const isRead = (p: AnyProcedure) => p.access === 'read' || ((p.access === 'public' || p.access === 'admin') && p.rest.method === 'GET');

/**
 * The role a key needs to call `p`: the one rule every front end goes through (invoke.ts). The
 * operator's endpoints (`access: 'admin'`) need an admin key of the operator's tenant: an agent
 * key handed to a bot of that tenant does not run the platform (docs/access.md, "Key roles").
 */
export const keyRoleOf = (p: AnyProcedure): KeyRole => (p.access === 'admin' ? 'admin' : (p.keyRole ?? 'agent'));

/**
 * Whether the input can fail validation. A procedure without fields ignores whatever it is sent
 * (unknown fields are ignored), and one whose every field falls back on a value of its own
 * (`.catch`: the pageview beacon, which never fails) takes anything. Neither refuses input that is
 * not an object (it reads it as `{}`) nor any text (input-guard.ts), and neither answers 422
 * (responses.ts).
 */
export const validatesInput = (p: AnyProcedure) => Object.values(p.input.shape as Record<string, z.ZodType>).some((f) => f._zod.def.type !== 'catch');
