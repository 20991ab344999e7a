/**
 * How the dashboard talks to the service, as any client would: the typed tRPC client for every
 * JSON call, REST for what tRPC as mounted cannot carry (below). Types come from the server's
 * router (a type-only import, erased from the build), never restated here.
 */
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../trpc/router.ts';

/** What each procedure takes and answers: `ApiOutput['memories']['get']`. */
export type ApiInput = inferRouterInputs<AppRouter>;
export type ApiOutput = inferRouterOutputs<AppRouter>;

const KEY = 'orgmem.apiKey';

/** The key lives in session storage: gone with the tab, never in a URL. */
export const storedKey = () => sessionStorage.getItem(KEY);
export const storeKey = (key: string | null) => (key ? sessionStorage.setItem(KEY, key) : sessionStorage.removeItem(KEY));

const bearer = (key: string | null): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

/**
 * A signed-in person's session (docs/sign-in.md, "Cookies and CSRF"): its cookie travels by itself
 * and is HTTP-only, so the tab never holds it; every call carries the session's CSRF token instead
 * of a key. Null: no session, calls carry the pasted key.
 */
let csrf: string | null = null;
export const setCsrf = (token: string | null) => void (csrf = token);
const credentials = (key: string | null): Record<string, string> => (key ? bearer(key) : csrf ? { 'x-orgmem-csrf': csrf } : {});

/** What GET /v1/auth/session answers for a live session cookie (host/signin-routes.ts). */
export interface CookieSession {
  person: { id: string; email: string; name: string; role: string };
  tenant: { id: string; name: string };
  csrf: string;
}

/** The cookie's live session, or null (none, ended, expired). */
export async function readCookieSession(): Promise<CookieSession | null> {
  const res = await fetch('/v1/auth/session', { credentials: 'same-origin' }).catch(() => null);
  return res?.status === 200 ? ((await res.json()) as CookieSession) : null;
}

/** Ends the cookie's session; the server clears the cookie. */
export async function endCookieSession(): Promise<void> {
  await fetch('/v1/auth/signout', { method: 'POST', credentials: 'same-origin', headers: credentials(null) }).catch(() => undefined);
}

/** Where the organization sign-in starts: an e-mail finds its organization, an id names it. */
export function signinStart(who: string, returnTo: string): string {
  const id = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(who);
  return `/v1/auth/oidc/start?${new URLSearchParams({ [id ? 'tenant' : 'email']: who, return_to: returnTo })}`;
}

// One request per call, as REST made them: a batch would answer only when its slowest call does
// (the health page's counts would wait for the LLM's summary).
const client = (key: () => string | null) => createTRPCClient<AppRouter>({ links: [httpLink({ url: '/trpc', headers: () => credentials(key()) })] });

/** The typed client, with the signed-in key or session: `rpc.memories.get.query({ collection, id })`. */
export const rpc = client(storedKey);
/** The same with another key: signing in checks a key before keeping it. */
export const rpcWithKey = (key: string) => client(() => key);

/** An error answer: `detail` is the service's own message, shown as it is; `status` 0 when the service was not reached. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

const UNREACHABLE = 'The service cannot be reached';

/** Any error a call throws as an ApiError: tRPC's carries the status and the same `detail` as REST. */
export function apiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof TRPCClientError) {
    const data = (err as TRPCClientError<AppRouter>).data;
    // No error shape: the request failed, or something other than the service answered.
    return data ? new ApiError(data.httpStatus, data.detail) : new ApiError(0, UNREACHABLE);
  }
  return new ApiError(0, String(err));
}

export interface ApiOptions {
  body?: unknown;
  /** multipart/form-data (file uploads). */
  form?: FormData;
}

/**
 * Calls `/v1/...` with the signed-in key; answers the JSON body, or throws ApiError with its
 * `detail`. Only for what tRPC cannot carry: file uploads (multipart streams each file from disk,
 * where tRPC would send them as base64 inside one JSON body, a third larger, built whole in the
 * tab and capped at the server's 8 MB JSON limit while a file may be 10 MB) and search (a tRPC
 * query travels in the URL, which Node caps at 16 kB: a 10,000-character query does not fit).
 * `T` is a type derived from the router.
 */
export async function api<T = unknown>(method: string, path: string, opts: ApiOptions = {}): Promise<T> {
  const headers = credentials(storedKey());
  let body: BodyInit | undefined;
  if (opts.form) body = opts.form;
  else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body });
  } catch {
    throw new ApiError(0, UNREACHABLE);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  if (!res.ok) {
    const detail = (json as { detail?: unknown } | null)?.detail;
    throw new ApiError(res.status, typeof detail === 'string' ? detail : `${res.status} ${res.statusText}`);
  }
  return json as T;
}

/** A search request's body over REST: the collection searched is in the path (or none: all of them). */
export type SearchBody = Omit<ApiInput['search']['collection'], 'collection'>;

/** Encodes a path segment (collection names, ids). */
export const seg = (s: string) => encodeURIComponent(s);

/** Query string from the defined values of an object. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
