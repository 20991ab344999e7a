import { STATUS, type ErrorCode } from '../core/errors.ts';
import { isRead, keyRoleOf, validatesInput, type AnyProcedure } from './procedure.ts';
import { refusablePermissions } from '../services/access/grants.ts';

export interface ErrorResponse {
  code: ErrorCode;
  status: number;
  /** When it happens; the front end's reasons, the pipeline's and the procedure's own, joined. */
  description: string;
}

/** Why an error is answered, by code: one reason per rule that answers it. */
export type ErrorReasons = Partial<Record<ErrorCode, string[]>>;

/** The errors `invoke` answers for a procedure from its access and input rules alone. */
function pipelineErrors(proc: AnyProcedure, add: (code: ErrorCode, why: string) => void) {
  if (validatesInput(proc)) add('UNPROCESSABLE_CONTENT', 'The input fails validation; errors[] names each invalid field');
  if (proc.access === 'internal') add('UNAUTHORIZED', `Missing or wrong shared secret in ${proc.secret?.header}`);
  else if (proc.access !== 'public') {
    add('UNAUTHORIZED', 'Missing, unknown, revoked or rotated API key');
    if (proc.access === 'admin') add('FORBIDDEN', 'The tenant is not an operator (admin) tenant');
    if (keyRoleOf(proc) === 'admin') add('FORBIDDEN', "The API key's role is agent: this needs an admin key");
    if (!isRead(proc)) add('FORBIDDEN', 'The API key is read-only');
    const refusable = proc.collection ? refusablePermissions(proc.collection) : [];
    if (refusable.length) add('FORBIDDEN', `The collection is restricted and the key is not granted ${refusable.join(' and ')} on it`);
    add('TOO_MANY_REQUESTS', "Over the key's rate limit (RateLimit-* headers on every authenticated answer; Retry-After in seconds)");
    // invoke reads the session of every authenticated call for the ledger (call-headers.ts, docs/trust.md).
    add('BAD_REQUEST', 'The X-Orgmem-Session header is not 1 to 200 printable ASCII characters without spaces');
  }
  if (proc.streams) add('BAD_REQUEST', 'stream: true from a front end other than REST (tRPC): only REST sends server-sent events');
  add('SERVICE_UNAVAILABLE', "A database cannot be reached now (the platform's, or the tenant's own: see /v1/memory/database/config)");
}

/**
 * Every error a procedure can answer, by status: `frontEnd`'s, those a front end answers itself
 * before the pipeline is reached (the REST adapter's unreadable request, rest-adapter/shape.ts),
 * then the pipeline's, then the procedure's declared ones.
 */
export function errorResponses(proc: AnyProcedure, frontEnd: ErrorReasons = {}): ErrorResponse[] {
  const reasons: ErrorReasons = {};
  const add = (code: ErrorCode, why: string) => (reasons[code] ??= []).push(why);
  for (const [code, why] of Object.entries(frontEnd) as Array<[ErrorCode, string[]]>) why.forEach((w) => add(code, w));
  pipelineErrors(proc, add);
  for (const [code, why] of Object.entries(proc.errors ?? {}) as Array<[ErrorCode, string]>) add(code, why);
  return (Object.entries(reasons) as Array<[ErrorCode, string[]]>)
    .map(([code, why]) => ({ code, status: STATUS[code], description: why.join('; or ') }))
    .sort((a, b) => a.status - b.status);
}

/** Whether `code` is an error this procedure answers through the pipeline, whatever the front end (see errorResponses). */
export const answers = (proc: AnyProcedure, code: ErrorCode) => errorResponses(proc).some((r) => r.code === code);
