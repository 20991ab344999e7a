import type { ZodError } from 'zod';

/** One error type for every layer; the front ends map `code` to their own status. */
export const STATUS = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof STATUS;

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** Extra response headers (Retry-After, WWW-Authenticate...). */
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
  }

  get status(): number {
    return STATUS[this.code];
  }

  body(): { detail: string; errors?: FieldError[] } {
    return this.errors ? { detail: this.detail, errors: this.errors } : { detail: this.detail };
  }
}

export const badRequest = (detail: string) => new AppError('BAD_REQUEST', detail);
export const notFound = (detail: string) => new AppError('NOT_FOUND', detail);
export const forbidden = (detail: string) => new AppError('FORBIDDEN', detail);
export const conflict = (detail: string) => new AppError('CONFLICT', detail);
export const unauthorized = (detail: string) => new AppError('UNAUTHORIZED', detail, undefined, { 'WWW-Authenticate': 'Bearer' });

/** A 422 naming each invalid field by its dotted path ("metadata.a.1"), the first one in `detail`. */
export function invalidInput(errors: FieldError[], headers?: Record<string, string>): AppError {
  const first = errors[0];
  const detail = first ? `Invalid request: ${first.path ? `${first.path}: ` : ''}${first.message}` : 'Invalid request';
  return new AppError('UNPROCESSABLE_CONTENT', detail, errors, headers);
}

/** A zod failure as a 422 whose `errors[].path` are dotted paths ("items.3.text"). */
export const validationError = (error: ZodError) =>
  invalidInput(error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));
