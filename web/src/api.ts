/** The dashboard talks to the service through its public REST API, as any client would. */

const KEY = 'orgmem.apiKey';

/** The key lives in session storage: gone with the tab, never in a URL. */
export const storedKey = () => sessionStorage.getItem(KEY);
export const storeKey = (key: string | null) => (key ? sessionStorage.setItem(KEY, key) : sessionStorage.removeItem(KEY));

/** An error answer: `detail` is the service's own message, shown as it is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface ApiOptions {
  body?: unknown;
  /** multipart/form-data (file uploads). */
  form?: FormData;
  /** Another key than the signed-in one (signing in). */
  key?: string;
}

/** Calls `/v1/...` with the signed-in key; answers the JSON body, or throws ApiError with its `detail`. */
export async function api<T = unknown>(method: string, path: string, opts: ApiOptions = {}): Promise<T> {
  const headers: Record<string, string> = {};
  const key = opts.key ?? storedKey();
  if (key) headers.authorization = `Bearer ${key}`;
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
    throw new ApiError(0, 'The service cannot be reached');
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

/** Encodes a path segment (collection names, ids). */
export const seg = (s: string) => encodeURIComponent(s);

/** Query string from the defined values of an object. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
