import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A tiny fetch wrapper: JSON in, JSON out, nothing hidden. */
export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  } else if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export interface Tenant {
  id: string;
  name: string;
  key: string;
  /** Calls the server with this tenant's key. */
  api<T = any>(method: string, path: string, body?: unknown, key?: string): Promise<Res<T>>;
  /** Creates another key of this tenant: an agent key unless `role` says admin. */
  newKey(label: string, readOnly?: boolean, role?: 'admin' | 'agent'): Promise<{ id: string; key: string }>;
}

/** A fresh tenant on the server: each test works in its own tenant, so tests never collide. */
export async function newTenant(baseUrl: string, adminKey: string, opts: { tier?: string; admin?: boolean } = {}): Promise<Tenant> {
  const suffix = randomBytes(5).toString('hex');
  const res = await call(baseUrl, 'POST', '/v1/memory/admin/tenants', {
    key: adminKey,
    body: { name: `t-${suffix}`, email: `t-${suffix}@test.local`, tier: opts.tier ?? 'enterprise', is_admin: opts.admin ?? false },
  });
  if (res.status !== 201) throw new Error(`tenant creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  const key = res.body.api_key as string;
  const t: Tenant = {
    id: res.body.tenant.id,
    name: res.body.tenant.name,
    key,
    api: (method, path, body, k = key) => call(baseUrl, method, path, { key: k, body }),
    async newKey(label, readOnly = false, role = 'agent') {
      const r = await call(baseUrl, 'POST', '/v1/memory/keys', { key, body: { label, role, read_only: readOnly } });
      if (r.status !== 201) throw new Error(`key creation failed: ${r.status}`);
      return { id: r.body.id, key: r.body.api_key };
    },
  };
  return t;
}

/** The server started once for the whole run by global-setup.ts. */
export function shared(): { url: string; adminKey: string } {
  return { url: inject('baseUrl'), adminKey: inject('adminKey') };
}

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    adminKey: string;
  }
}
