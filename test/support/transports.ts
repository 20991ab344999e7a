import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { catalogue } from '../../procedures/index.ts';
import { isRead, type AnyProcedure } from '../../src/pipeline/procedure.ts';
import { restShape } from '../../rest-adapter/shape.ts';
import type { AppRouter } from '../../trpc/router.ts';
import { call, type Res } from './client.ts';

/**
 * Calls any catalogue procedure with an input object over each front end, the way a client
 * of that front end would. Used by the tests generated from the catalogue.
 */

/**
 * REST, as the procedure's REST shape says: path parameters, query string, headers, then the JSON
 * or multipart body (one field's value, or its text, as the body itself where the shape says so).
 */
export function restCall(url: string, key: string, proc: AnyProcedure, input: Record<string, unknown>): Promise<Res> {
  const rest = { ...input };
  const path = proc.rest.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  const { method } = proc.rest;
  const shape = restShape(proc);
  const headers: Record<string, string> = {};
  for (const [field, header] of shape.headers) {
    const value = rest[field];
    delete rest[field];
    // A value no HTTP header can carry (NUL, a line break) is left out: no client could send it.
    if (typeof value === 'string' && /^[\t\x20-\x7e]*$/.test(value)) headers[header] = value;
  }
  const { body } = shape;
  const query = new URLSearchParams();
  // Without a body, whatever is left (unknown fields too) can only go in the query string.
  for (const f of body ? shape.query.filter((f) => f in rest) : Object.keys(rest)) {
    query.set(f, String(rest[f]));
    delete rest[f];
  }
  const target = path + (query.size ? `?${query}` : '');
  if (body?.as === 'multipart') return postForm(url, key, target, rest);
  if (body?.as === 'text') return call(url, method, target, { key, headers, rawBody: String(rest[body.field] ?? '') });
  return call(url, method, target, { key, headers, body: body?.as === 'field' ? rest[body.field] : body && rest });
}

/** A file in the JSON form tRPC and MCP callers send. */
export interface JsonFile {
  filename: string;
  content_type: string;
  /** base64 */
  data: string;
}

/** A multipart POST as a browser or curl sends it: `files` parts, other fields as text. */
export async function postForm(url: string, key: string, path: string, fields: Record<string, unknown>): Promise<Res> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'files') {
      for (const f of value as JsonFile[]) form.append('files', new Blob([Buffer.from(f.data, 'base64')], { type: f.content_type }), f.filename);
    } else form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  const res = await fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** The tRPC path of a procedure: its place in the catalogue. */
export function trpcPath(proc: AnyProcedure): [string, string] {
  for (const [group, procs] of Object.entries(catalogue)) {
    for (const [verb, p] of Object.entries(procs)) if (p === proc) return [group, verb];
  }
  throw new Error(`${proc.name} is not in the catalogue`);
}

export function trpcClient(url: string, key: string) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${key}` } })] });
}

/** Calls a procedure through the typed tRPC client; answers 'ok' or the error's HTTP status. */
export async function trpcCall(client: ReturnType<typeof trpcClient>, proc: AnyProcedure, input: Record<string, unknown>): Promise<'ok' | number> {
  const [group, verb] = trpcPath(proc);
  // The path is only known at run time; the client proxy resolves it the same way as a typed call.
  const fn = (client as unknown as Record<string, Record<string, { query(i: unknown): Promise<unknown>; mutate(i: unknown): Promise<unknown> }>>)[group]![
    verb
  ]!;
  try {
    await (isRead(proc) ? fn.query(input) : fn.mutate(input));
    return 'ok';
  } catch (err) {
    if (err instanceof TRPCClientError) return (err.data as { httpStatus: number }).httpStatus;
    throw err;
  }
}

export async function mcpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'orgmem-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** Calls a procedure's MCP tool; answers 'ok' or the status the tool error starts with. */
export async function mcpCall(client: Client, proc: AnyProcedure, input: Record<string, unknown>): Promise<'ok' | number> {
  const result = await client.callTool({ name: proc.mcp!.tool, arguments: input });
  if (!result.isError) return 'ok';
  const text = (result.content as Array<{ text: string }>)[0]!.text;
  const status = /^(\d{3}):/.exec(text);
  if (!status) throw new Error(`MCP tool error without a status: ${text}`);
  return Number(status[1]);
}
