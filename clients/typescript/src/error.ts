import type { components } from './schema.js';

/** The body of every error answer of the API: `detail` says what went wrong, `errors` which fields (on a 422). */
export type ErrorBody = components['schemas']['Error'];

/** An error answer of the API, thrown by `orThrow`: its HTTP status and its body's `detail`. */
export class OrgmemError extends Error {
  override readonly name = 'OrgmemError';

  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors: ErrorBody['errors'] = undefined,
  ) {
    super(`${status}: ${detail}`);
  }
}

/** What every call of the client answers (openapi-fetch's result): the data, or the error body, with the response. */
export type Answer<T> = { data: T; error?: never; response: Response } | { data?: never; error: unknown; response: Response };

/**
 * The data of an answer, or an `OrgmemError` for an error answer. A body that is not orgmem's
 * (a proxy in front of it answering 502 with HTML) gives the status text as the detail.
 */
export function orThrow<T>(answer: Answer<T>): Exclude<T, undefined> {
  if (answer.error === undefined) return answer.data as Exclude<T, undefined>;
  const body = answer.error as Partial<ErrorBody> | null;
  const detail = typeof body?.detail === 'string' ? body.detail : answer.response.statusText;
  throw new OrgmemError(answer.response.status, detail, body?.errors);
}
