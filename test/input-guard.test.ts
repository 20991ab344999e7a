import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { catalogue, procedures } from '../procedures/index.ts';
import { restShape } from '../rest-adapter/shape.ts';
import { MAX_INPUT_DEPTH } from '../src/pipeline/input-guard.ts';
import type { AnyProcedure } from '../src/pipeline/procedure.ts';
import { call, newTenant, shared, type Tenant } from './support/client.ts';
import { mcpCall, mcpClient, restCall, trpcCall, trpcClient } from './support/transports.ts';

/**
 * Text PostgreSQL cannot hold (NUL, unpaired surrogates) and nesting that overflows the stack
 * are refused by the pipeline for every procedure and front end: a 422 naming the field, never
 * a 500, and nothing stored.
 */
const { url, adminKey } = shared();
const NUL = 'a\u0000b';
const C = '/v1/memory/collections/guarded';

let t: Tenant;
beforeAll(async () => {
  t = await newTenant(url, adminKey);
  expect((await t.api('POST', '/v1/memory/collections', { name: 'guarded', description: 'kept as is' })).status).toBe(201);
});

/** JSON of an object nested `levels` deep as {"a": {"a": ...}}: too deep for JSON.stringify to write. */
const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"leaf":true}${'}'.repeat(levels - 1)}`;

async function memoryTexts(): Promise<string[]> {
  const res = await t.api('GET', `${C}/memories?include_archived=true&limit=100`);
  expect(res.status).toBe(200);
  return res.body.map((m: { text: string }) => m.text);
}

function expect422(res: { status: number; body: any }, path: string, message: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail).toContain(path);
  expect(res.body.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
}

describe('NUL characters over REST', () => {
  it.each([
    ['memory text', 'POST', `${C}/memories`, { text: NUL }, 'text'],
    ['a metadata key', 'POST', `${C}/memories`, { text: 'ok', metadata: { [NUL]: 1 } }, 'metadata.a\\u0000b'],
    ['a metadata value deep inside', 'POST', `${C}/memories`, { text: 'ok', metadata: { a: { b: ['x', NUL] } } }, 'metadata.a.b.1'],
    ['a bulk item', 'POST', `${C}/memories/bulk`, [{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }, { text: NUL }], '3.text'],
    ['remember content', 'POST', `${C}/remember`, { content: NUL }, 'content'],
    ['a search query', 'POST', `${C}/search`, { query: NUL }, 'query'],
  ])('in %s: 422 naming the field, nothing stored', async (_what, method, path, body, field) => {
    const res = await t.api(method, path, body);
    expect422(res, field, field.includes('\\u0000') ? /^key must not contain a NUL/ : /^must not contain a NUL/);
    expect(await memoryTexts()).toEqual([]);
  });

  it('in a key label: 422, no key created', async () => {
    expect422(await t.api('POST', '/v1/memory/keys', { label: NUL }), 'label', /NUL/);
    expect((await t.api('GET', '/v1/memory/keys')).body).toHaveLength(1);
  });

  it('in a collection description: 422, the description unchanged', async () => {
    expect422(await t.api('PUT', '/v1/memory/collections/guarded', { description: NUL }), 'description', /NUL/);
    expect((await t.api('GET', '/v1/memory/collections/guarded')).body.description).toBe('kept as is');
  });

  it('in a path parameter: 422', async () => {
    expect422(await t.api('GET', '/v1/memory/collections/a%00b'), 'name', /NUL/);
  });
});

describe('NUL characters over tRPC and MCP', () => {
  let mcp: Client;
  beforeAll(async () => {
    mcp = await mcpClient(url, t.key);
  });
  afterAll(() => mcp.close());

  it('tRPC answers 422', async () => {
    expect(await trpcCall(trpcClient(url, t.key), catalogue.memories.create, { collection: 'guarded', text: NUL })).toBe(422);
    expect(await memoryTexts()).toEqual([]);
  });

  it('an MCP tool answers a "422:" error', async () => {
    expect(await mcpCall(mcp, catalogue.memories.create, { collection: 'guarded', text: 'ok', metadata: { k: NUL } })).toBe(422);
    expect(await memoryTexts()).toEqual([]);
  });
});

describe('unpaired surrogates and deep nesting', () => {
  it('a lone surrogate in a key label: 422, no key created', async () => {
    // JSON.stringify writes the lone surrogate as the escape "\ud800", as a hostile client would.
    expect422(await t.api('POST', '/v1/memory/keys', { label: 'x\ud800' }), 'label', /unpaired UTF-16 surrogate/);
    expect422(await t.api('POST', '/v1/memory/keys', { label: '\udc00x' }), 'label', /unpaired UTF-16 surrogate/);
    expect((await t.api('GET', '/v1/memory/keys')).body).toHaveLength(1);
  });

  it('metadata nested 5,000 levels: 422 naming the depth limit', async () => {
    const res = await call(url, 'POST', `${C}/memories`, { key: t.key, rawBody: `{"text":"deep","metadata":${nested(5_000)}}` });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors[0].path).toMatch(/^metadata(\.a)+$/);
    expect(res.body.errors[0].message).toContain(`${MAX_INPUT_DEPTH} levels`);
    expect(await memoryTexts()).toEqual([]);
  });

  it('a metadata_filter nested 100,000 levels: 422', async () => {
    const res = await call(url, 'POST', `${C}/search`, { key: t.key, rawBody: `{"query":"x","metadata_filter":${nested(100_000)}}` });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(422);
    expect(res.body.detail).toContain(`${MAX_INPUT_DEPTH} levels`);
  });

  it('a multipart metadata field (JSON text) is screened once read', async () => {
    const res = await restCall(url, t.key, catalogue.memories.upload, {
      collection: 'guarded',
      text: 'uploaded',
      metadata: JSON.stringify({ k: NUL }),
      files: [{ filename: 'a.txt', content_type: 'text/plain', data: Buffer.from('a file').toString('base64') }],
    });
    expect422(res, 'metadata.k', /NUL/);
    // Nested past the stack, it is refused by the schema's size check, which must not throw.
    const deep = await restCall(url, t.key, catalogue.memories.upload, { collection: 'guarded', text: 'deep', metadata: nested(5_000) });
    expect(deep.status, JSON.stringify(deep.body)).toBe(422);
    expect(deep.body.errors[0].path).toBe('metadata');
    expect(await memoryTexts()).toEqual([]);
  });

  it('legitimate non-ASCII text, emoji (surrogate pairs) included, is accepted as is', async () => {
    const text = 'Ünïcödé ✓ 日本語 😀👍🏽 — “quotes”';
    const res = await t.api('POST', `${C}/memories`, { text, metadata: { 'ключ 🔑': ['😀', { ü: 'é' }] }, container_tag: '🏷️' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const got = await t.api('GET', `${C}/memories/${res.body.id}`);
    expect(got.body.text).toBe(text);
    expect(got.body.metadata).toEqual({ 'ключ 🔑': ['😀', { ü: 'é' }] });
    // Files are bytes, not text: a NUL inside an uploaded file is no reason to refuse it.
    const upload = await restCall(url, t.key, catalogue.memories.upload, {
      collection: 'guarded',
      text: 'a binary file',
      files: [{ filename: 'b.bin', content_type: 'application/octet-stream', data: Buffer.from([0, 1, 0, 2]).toString('base64') }],
    });
    expect(upload.status, JSON.stringify(upload.body)).toBe(201);
  });
});

it('the beacon, which never fails, leaves out a field it could not store (over tRPC, where a 500 would show)', async () => {
  const client = trpcClient(url, t.key);
  expect(await trpcCall(client, catalogue.system.pulse, { path: NUL })).toBe('ok');
  expect(await trpcCall(client, catalogue.system.pulse, { path: '/ok', referrer: 'x\ud800' })).toBe('ok');
});

/** Whether a declared field takes text, through optional, default, preprocess and the like. */
function takesText(schema: z.ZodType): boolean {
  const def = (schema as unknown as { def: { type: string; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType } }).def;
  if (def.type === 'string') return true;
  if (def.innerType) return takesText(def.innerType);
  if (def.in && def.out) return takesText((def.in as unknown as { def: { type: string } }).def.type === 'transform' ? def.out : def.in);
  return false;
}

/** Path parameters name something real, so the text fields, not a 404, decide the answer. */
const isPathParam = (proc: AnyProcedure, field: string) => proc.rest.path.includes(`{${field}}`);
const textFields = (proc: AnyProcedure) =>
  Object.entries(proc.input.shape as Record<string, z.ZodType>)
    .filter(([f, s]) => takesText(s) && !isPathParam(proc, f))
    .map(([f]) => f);
const withText = procedures.filter((p) => textFields(p).length && !restShape(p).tolerant);

describe('every procedure with text fields (generated from the catalogue)', () => {
  let admin: Tenant;
  let memoryId: string;
  beforeAll(async () => {
    admin = await newTenant(url, adminKey, { admin: true });
    memoryId = (await admin.api('POST', `${C}/memories`, { text: 'a memory to address' })).body.id;
  });

  it('covers the catalogue', () => {
    expect(withText.length).toBeGreaterThan(20);
  });

  it.each(withText.map((p) => [p.name, p] as const))('%s: NUL in every text field is a 4xx with a detail, never a 5xx', async (_name, proc) => {
    const known: Record<string, unknown> = { collection: 'guarded', name: 'guarded', id: memoryId, image_index: 0 };
    const params = Object.fromEntries([...proc.rest.path.matchAll(/\{(\w+)\}/g)].map(([, f]) => [f, known[f!] ?? '00000000-0000-7000-8000-000000000000']));
    const input = { ...params, ...Object.fromEntries(textFields(proc).map((f) => [f, NUL])) };
    const res = await restCall(url, admin.key, proc, input);
    expect(res.status, JSON.stringify(res.body)).toBeGreaterThanOrEqual(400);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
    expect(res.body.detail).toEqual(expect.any(String));
  });
});
