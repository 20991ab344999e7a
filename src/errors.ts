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
export const unauthorized = (detail: string) =>
  new AppError('UNAUTHORIZED', detail, undefined, { 'WWW-Authenticate': 'Bearer' });

/** A zod failure as a 422 whose `errors[].path` are dotted paths ("3.text"). */
export function validationError(error: ZodError, dropPrefix?: string): AppError {
  const errors = error.issues.map((issue) => {
    let path = issue.path.map(String);
    if (dropPrefix && path[0] === dropPrefix) path = path.slice(1);
    return { path: path.join('.'), message: issue.message };
  });
  const first = errors[0];
  const detail = first
    ? `Invalid request: ${first.path ? `${first.path}: ` : ''}${first.message}`
    : 'Invalid request';
  return new AppError('UNPROCESSABLE_CONTENT', detail, errors);
}
