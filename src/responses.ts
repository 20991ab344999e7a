import { STATUS, type ErrorCode } from './errors.ts';
import { isRead, type AnyProcedure } from './procedure.ts';

export interface ErrorResponse {
  code: ErrorCode;
  status: number;
  /** When it happens; the pipeline's reasons and the procedure's own, joined. */
  description: string;
}

/**
 * The errors the pipeline (invoke and the HTTP server in front of it) answers for a procedure,
 * from its access and input rules alone. A tolerant procedure (the beacon) answers success
 * whatever it is sent.
 */
function pipelineErrors(proc: AnyProcedure): Partial<Record<ErrorCode, string[]>> {
  const errors: Partial<Record<ErrorCode, string[]>> = {};
  const add = (code: ErrorCode, why: string) => (errors[code] ??= []).push(why);
  if (!proc.rest.tolerant) {
    add(
      'BAD_REQUEST',
      proc.rest.multipart
        ? 'The request cannot be read (a malformed URL, a broken multipart or JSON body, another content type)'
        : 'The request cannot be read (a malformed URL or JSON body, a content type other than JSON)',
    );
    // Unknown fields are ignored, so an operation without input fields has nothing to refuse.
    if (Object.keys(proc.input.shape).length) add('UNPROCESSABLE_CONTENT', 'The input fails validation; errors[] names each invalid field');
    if (proc.rest.method !== 'GET' && proc.rest.method !== 'DELETE') add('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit');
  }
  if (proc.access === 'internal') add('UNAUTHORIZED', `Missing or wrong shared secret in ${proc.secret?.header}`);
  else if (proc.access !== 'public') {
    add('UNAUTHORIZED', 'Missing, unknown, revoked or rotated API key');
    if (proc.access === 'admin') add('FORBIDDEN', 'The tenant is not an operator (admin) tenant');
    if (!isRead(proc)) add('FORBIDDEN', 'The API key is read-only');
    if (proc.collection) add('FORBIDDEN', `The collection is restricted and the key is not granted ${proc.collection.permission} on it`);
    add('TOO_MANY_REQUESTS', "Over the key's rate limit (RateLimit-* headers on every authenticated answer; Retry-After in seconds)");
  }
  add('SERVICE_UNAVAILABLE', "A database cannot be reached now (the platform's, or the tenant's own: see /v1/memory/database/config)");
  return errors;
}

/** Every error a procedure can answer: the pipeline's and its own declared ones, by status. */
export function errorResponses(proc: AnyProcedure): ErrorResponse[] {
  const reasons = pipelineErrors(proc);
  for (const [code, why] of Object.entries(proc.errors ?? {}) as Array<[ErrorCode, string]>) (reasons[code] ??= []).push(why);
  return (Object.entries(reasons) as Array<[ErrorCode, string[]]>)
    .map(([code, why]) => ({ code, status: STATUS[code], description: why.join('; or ') }))
    .sort((a, b) => a.status - b.status);
}

/** Whether `code` is an error this procedure can answer (see errorResponses). */
export const answers = (proc: AnyProcedure, code: ErrorCode) => errorResponses(proc).some((r) => r.code === code);

/** The status of a success: the alternative one when the input selects it. */
export const successStatus = (proc: AnyProcedure, input: unknown) => (proc.rest.altStatus?.when(input) ? proc.rest.altStatus.status : proc.rest.status);
