import { badRequest } from './errors.ts';
import { iso, isUuid } from './ids.ts';

/**
 * A page cursor over rows ordered by (time, id) descending: the last row's time and id, so that a
 * page never repeats nor skips a row of the same millisecond. Opaque to the client.
 */
export const encodeCursor = (at: Date, id: string) => Buffer.from(`${iso(at)}|${id}`).toString('base64url');

/** The time and id a cursor names; a 400 for one this service did not answer. */
export function decodeCursor(cursor: string): [string, string] {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (!at || !id || !isUuid(id) || Number.isNaN(Date.parse(at)))
    throw badRequest('cursor is not one this endpoint answered: send the `next` of the page before');
  return [at, id];
}
