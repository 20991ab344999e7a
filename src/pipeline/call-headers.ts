import { badRequest } from '../core/errors.ts';

/** The header a caller names its session with, on every HTTP front end (docs/trust.md, "The influence ledger"). */
export const SESSION_HEADER = 'x-orgmem-session';
/** `hook`: the call comes from a harness hook (docs/hooks.md); what it captures is of trust class `tool`. */
export const VIA_HEADER = 'x-orgmem-via';

type Headers = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The session and hook marks of a request's headers, for its Caller. Claiming to be a hook only
 * lowers what the call's writes are trusted with, so it needs no proof.
 */
export const callMarks = (headers: Headers, fallbackSession?: string | string[]) => ({
  session: first(headers[SESSION_HEADER]) ?? first(fallbackSession),
  hook: first(headers[VIA_HEADER]) === 'hook',
});

const SESSION = /^[\x21-\x7e]{1,200}$/;

/** A session as the ledger keeps it; a malformed one is refused rather than dropped, so a caller never believes it was recorded. */
export function checkedSession(session: string | undefined): string | null {
  if (session === undefined) return null;
  if (!SESSION.test(session)) throw badRequest(`The ${SESSION_HEADER} header must be 1 to 200 printable ASCII characters without spaces`);
  return session;
}
