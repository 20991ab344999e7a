import { randomUUID, timingSafeEqual } from 'node:crypto';
import { recordAudit } from './audit-hook.ts';
import type { Agent, App, AuthedCtx, PublicCtx } from '../core/context.ts';
import { Download } from '../core/download.ts';
import { EventStream } from '../core/event-stream.ts';
import { AppError, badRequest, forbidden, unauthorized, validationError } from '../core/errors.ts';
import { checkedSession } from './call-headers.ts';
import { screenInput } from './input-guard.ts';
import { isUnreachable } from '../ports/db/db.ts';
import { inUnitOfWork } from '../ports/db/unit-of-work.ts';
import { isRead, keyRoleOf, validatesInput, type AnyProcedure } from './procedure.ts';
import { answers } from './responses.ts';
import type { Tenant } from '../schemas/access.ts';
import type { FrontEnd } from '../schemas/trust.ts';
import { authenticate } from '../services/access/authenticate.ts';
import { NO_GRANTS, resolveGrants } from '../services/access/grants.ts';
import { enforce, rateLimited } from '../services/access/rate-limit.ts';
import { tenantApp } from '../services/tenant-db/tenant-app.ts';

export interface Caller {
  /** The raw Authorization header, if any. */
  authorization?: string;
  ip?: string;
  /** `scheme://host[:port]` the request was addressed to. */
  origin?: string;
  /** The value of the procedure's `secret.header`, for internal procedures. */
  secret?: string;
  /** Set by a front end that already authenticated (and rate-limited) this HTTP request. */
  auth?: { tenant: Tenant; agent: Agent; database: string | null };
  /** The front end can send server-sent events (REST); without, an input asking for them is refused (Procedure.streams). */
  events?: boolean;
  /** The front end the call came through, for the influence ledger (docs/trust.md). */
  via: Exclude<FrontEnd, 'proxy' | 'hook'>;
  /** The session the caller named (call-headers.ts), or the front end's own (an MCP stdio process). */
  session?: string;
  /** The call comes from a harness hook (call-headers.ts). */
  hook?: boolean;
}

export interface InvokeResult {
  output: unknown;
  /** Headers for the response (rate limits). */
  headers: Record<string, string>;
  /** The input as the procedure's schema read it, for a front end's own choices (REST's alternative success status). */
  input: unknown;
}

/**
 * The one pipeline every front end calls: authenticate (and rate-limit) -> operator, key role and read-only
 * checks -> parse -> collection grants -> handler -> output check -> audit (writes, in the
 * write's own transaction) -> error mapping. Access rules live here and nowhere else.
 */
export async function invoke(app: App, proc: AnyProcedure, caller: Caller, rawInput: unknown): Promise<InvokeResult> {
  const base: PublicCtx = { app, requestId: randomUUID(), ip: caller.ip, origin: app.config.publicUrl ?? caller.origin };
  const headers: Record<string, string> = {};
  const started = performance.now();
  // The operator's metrics: every call, every front end, with the pipeline's outcome: the
  // procedure's success status (a front end's alternative one, REST's 200 for a sync remember, is
  // a success all the same), or the failure's status, even where the front end answers otherwise
  // (REST's beacon answers 204 whatever happened; a failing beacon still shows as failing).
  const record = (status: number) => app.metrics.request(proc.rest, status, performance.now() - started);
  try {
    let ctx: PublicCtx | AuthedCtx = base;
    if (proc.access === 'internal') checkSecret(app, proc, caller.secret);
    else if (proc.access !== 'public') {
      const auth = caller.auth ?? (await authenticateRequest(app, caller.authorization, headers));
      // The tenant's data may live in its own database: the context's App is the tenant's from here on.
      const call = { via: proc.frontEnd ?? (caller.hook ? 'hook' : caller.via), procedure: proc.name, session: checkedSession(caller.session) } as const;
      ctx = { ...base, app: await tenantApp(app, auth.tenant.id, auth.database), tenant: auth.tenant, agent: auth.agent, call };
      if (proc.access === 'admin' && !auth.tenant.is_admin) throw forbidden('Operator endpoints need an admin tenant');
      if (keyRoleOf(proc) === 'admin' && auth.agent.role !== 'admin' && !(proc.forPerson && auth.agent.for)) {
        throw forbidden(`${proc.name} needs an admin API key; this key's role is ${auth.agent.role}`);
      }
      // A write that a dry run turns into a read is decided once its input is read.
      if (auth.agent.read_only && !isRead(proc) && !proc.readWhen) throw forbidden('This API key is read-only');
    }
    const isObject = typeof rawInput === 'object' && rawInput !== null && !Array.isArray(rawInput);
    const parsed = proc.input.safeParse(screenInput(proc, isObject || validatesInput(proc) ? (rawInput ?? {}) : {}));
    if (!parsed.success) throw validationError(parsed.error);
    // Again on what the schema read out of text: a multipart `metadata` field is a JSON string.
    screenInput(proc, parsed.data);
    if (proc.streams?.(parsed.data) && !caller.events) {
      throw badRequest(
        `This ${proc.name} call asks for server-sent events, which only REST sends: use ${proc.rest.method} ${proc.rest.path}, or leave stream out`,
      );
    }
    const reads = isRead(proc) || !!proc.readWhen?.(parsed.data);
    if ('agent' in ctx && ctx.agent.read_only && !reads) throw forbidden('This API key is read-only');
    const grants = proc.collection && 'agent' in ctx ? await resolveGrants(ctx, proc.collection, parsed.data, reads) : NO_GRANTS;
    const run = async () => {
      const result = await proc.handler(ctx as AuthedCtx, parsed.data, grants);
      return result instanceof Download || result instanceof EventStream ? result : proc.output.parse(result);
    };
    // A write's audit entry commits with the write (a read is not audited).
    const output =
      'agent' in ctx && !reads
        ? await inUnitOfWork(app.platform, proc.commits ?? 'together', run, (q, out) => recordAudit(q, ctx as AuthedCtx, proc, parsed.data, out))
        : await run();
    record(proc.rest.status);
    return { output, headers, input: parsed.data };
  } catch (err) {
    const error = toAppError(app, proc, err, base.requestId, headers);
    record(error.status);
    throw error;
  }
}

/**
 * Authenticates a request and counts its `calls` (each call of a batch, docs/contract.md "Rate
 * limits") against its key's rate limit: RateLimit-* go into `headers`; `within` is how many of the
 * calls, the first ones, fit in the window, and none fitting is a 429 with Retry-After. `refusal`
 * is what each call past them answers. `audience`: the resource the request is addressed to, where
 * OAuth access tokens issued for it are accepted (the MCP endpoint, docs/mcp.md).
 */
export async function authenticateRequest(app: App, authorization: string | undefined, headers: Record<string, string>, calls = 1, audience?: string) {
  const auth = await authenticate(app, authorization, calls, audience);
  const limit = auth.tenant.limits.rate_limit_per_minute;
  const within = enforce(headers, limit, auth.rate, 'API key', calls);
  return { ...auth, within, refusal: () => rateLimited(limit, auth.rate!) };
}

/** Constant-time, and an unset secret never matches: an unconfigured internal endpoint is closed. */
function checkSecret(app: App, proc: AnyProcedure, given: string | undefined) {
  const expected = proc.secret?.value(app.config);
  const [a, b] = [Buffer.from(given ?? ''), Buffer.from(expected ?? '')];
  const ok = !!expected && a.length === b.length && timingSafeEqual(a, b);
  if (!ok) throw unauthorized(`This endpoint is internal: send the shared secret in ${proc.secret?.header ?? 'its header'}`);
}

function toAppError(app: App, proc: AnyProcedure, err: unknown, requestId: string, headers: Record<string, string>): AppError {
  if (err instanceof AppError) {
    // Still answered as thrown; the procedure's declaration (and so its documentation) is what is wrong.
    if (!answers(proc, err.code)) app.log.error({ procedure: proc.name, code: err.code, detail: err.detail, requestId }, 'undeclared error answered');
    // Headers gathered before the failure (rate limits) go out on the error response too.
    return new AppError(err.code, err.detail, err.errors, { ...headers, ...err.headers });
  }
  // A unique-constraint race lost to a concurrent request is a conflict, not a crash.
  if ((err as { code?: string })?.code === '23505') return new AppError('CONFLICT', 'The resource already exists');
  if (isUnreachable(err)) {
    app.log.warn({ err, procedure: proc.name, requestId }, 'a database is unreachable');
    // Its address stays in the log: the platform's is none of the caller's business.
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `A database cannot be reached now (the platform's, or your own if you configured one); try again later (request ${requestId})`,
      undefined,
      headers,
    );
  }
  app.log.error({ err, procedure: proc.name, requestId }, 'unhandled error');
  return new AppError('INTERNAL_SERVER_ERROR', `Internal error (request ${requestId})`);
}
