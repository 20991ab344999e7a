import { maxHeaderSize } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, it } from 'vitest';
import type { z } from 'zod';
import { procedures } from '../procedures/index.ts';
import { restErrorResponses, restShape } from '../rest-adapter/shape.ts';
import { isRead, type AnyProcedure } from '../src/pipeline/procedure.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { mcpClient, trpcPath } from './support/transports.ts';

/**
 * A property-based fuzzer generated from the catalogue: every procedure, including ones added
 * later, gets malformed bodies, path parameters and query strings over REST, tRPC and MCP, and
 * must refuse them without a 5xx and in its front end's error shape.
 *
 * The seed is fixed so CI is reproducible. To explore: FUZZ_SEED=<int> picks another seed,
 * FUZZ_RUNS=<n> the inputs per procedure over REST and tRPC (MCP gets a third of them).
 * A failure names the procedure and transport and prints the shrunk counterexample.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 15);
const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
/** Bodies may be large; strings bound for a URL stay shorter so most requests reach the app. */
const BODY_STRING = 100_000;
const URL_STRING = 2_000;

const { url, adminKey } = shared();

// ---- values -------------------------------------------------------------------------------

/** Pieces that break naive parsing, encoding or SQL: NUL, lone surrogates, controls, emoji, path tricks. */
const ODD = ['\u0000', '\ud800', '\udfff', '\u0007', '\u001b', '\u202e', '\ufeff', '😀', '👩‍👩‍👧', 'é', '中', '\n', '\r\n'];
const TRICKS = ['%', '%00', '%zz', '..', '../', '/', '\\', '?', '#', '&', '=', '+', ' ', '"', "'", '{', '$1', '\\u0000', "'; drop table memories; --"];
const oddString = fc.array(fc.oneof(fc.constantFrom(...ODD, ...TRICKS), fc.string({ maxLength: 8 })), { maxLength: 12 }).map((p) => p.join(''));
const hugeString = (max: number) =>
  fc
    .tuple(fc.constantFrom('x', '😀', '\u0000', 'é', '\ud800'), fc.integer({ min: Math.min(1_000, max), max }))
    .map(([c, n]) => c.repeat(Math.ceil(n / c.length)));
const text = (max: number) =>
  fc.oneof({ weight: 4, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 4, arbitrary: oddString }, { weight: 1, arbitrary: hugeString(max) });

const deep = fc.tuple(fc.integer({ min: 20, max: 200 }), fc.boolean()).map(([depth, arrays]) => {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { a: v };
  return v;
});
const scalar = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.constantFrom(-1, 0, 0.5, 2 ** 53, -(2 ** 63), 1e308), oddString);
/** A value of any JSON type: wrong for most fields. */
const junk = (max: number) =>
  fc.oneof(
    { weight: 3, arbitrary: scalar },
    { weight: 1, arbitrary: text(max) },
    { weight: 1, arbitrary: deep },
    { weight: 2, arbitrary: fc.array(scalar, { maxLength: 5 }) },
    { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), scalar, { maxKeys: 5 }) },
  );

/** The parts of a zod definition the generator reads; anything else gets junk. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
  shape?: Record<string, z.ZodType>;
}

/** A value of the declared type (valid-looking, not necessarily valid). */
function likely(schema: z.ZodType, max: number, depth: number): fc.Arbitrary<unknown> {
  const def = schema._zod.def as unknown as Def;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
    case 'catch':
      return likely(def.innerType!, max, depth);
    case 'pipe':
      return likely(def.in!, max, depth);
    case 'string':
      return text(max);
    case 'number':
      return fc.oneof(fc.integer({ min: -5, max: 200 }), fc.double());
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries!));
    case 'literal':
      return fc.constantFrom(...def.values!);
    case 'array':
      return depth > 2 ? fc.constant([]) : fc.array(likely(def.element!, max, depth + 1), { maxLength: 4 });
    case 'object':
      return depth > 2 ? fc.constant({}) : fields(def.shape!, max, depth + 1);
    default:
      return junk(max);
  }
}

/** Any subset of the declared fields, each valid-looking or of a wrong type, plus unknown fields. */
function fields(shape: Record<string, z.ZodType>, max: number, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const declared = fc.record(
    Object.fromEntries(
      Object.entries(shape).map(([k, s]) => [k, fc.oneof({ weight: 5, arbitrary: likely(s, max, depth) }, { weight: 3, arbitrary: junk(max) })]),
    ),
    { requiredKeys: [] },
  );
  const unknownKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'tenant_id', 'id'));
  const extra = fc.dictionary(unknownKey, junk(max), { maxKeys: 3 });
  return fc.tuple(declared, extra).map(([d, e]) => ({ ...e, ...d }));
}

// ---- path parameters ----------------------------------------------------------------------

/** Segments sent as they are, not encoded: broken escapes, dot segments, invalid UTF-8. */
const RAW_SEGMENTS = ['%', '%zz', '%00', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '..', '.', '%2e%2e', '%2F', '%252F'];

/** A path parameter: the real one (an existing collection, memory...), random text, or a raw segment. */
type Param = { real: true } | { text: unknown } | { raw: string };
const param: fc.Arbitrary<Param> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ real: true as const }) },
  { weight: 3, arbitrary: text(URL_STRING).map((t) => ({ text: t })) },
  { weight: 1, arbitrary: junk(URL_STRING).map((t) => ({ text: t })) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((raw) => ({ raw })) },
);

const paramNames = (proc: AnyProcedure) => [...proc.rest.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** Real values for the path parameters, made in beforeAll. */
const real: Record<string, string> = {};

function paramValue(p: Param, name: string): unknown {
  return 'real' in p ? real[name] : 'text' in p ? p.text : p.raw;
}

const asText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)));

/** encodeURIComponent, except a lone surrogate becomes its WTF-8 bytes: invalid UTF-8 a client can still send. */
function encodeSegment(s: string): string {
  return s
    .split(/([\ud800-\udfff])/u)
    .map((part, i) => {
      if (i % 2 === 0) return encodeURIComponent(part);
      const c = part.charCodeAt(0);
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    })
    .join('');
}

/** The value a case generator makes. */
type Case<F> = F extends (proc: AnyProcedure) => fc.Arbitrary<infer T> ? T : never;

// ---- the checks ---------------------------------------------------------------------------

interface Answer {
  status: number;
  text: string;
}

async function send(target: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url + target, init);
  return { status: res.status, text: await res.text() };
}

function json(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Node answers 431 itself, before the app, to a request line beyond its header limit. */
const tooLongForNode = (a: Answer, target: string) => a.status === 431 && target.length > maxHeaderSize / 2;

/**
 * A 5xx is a failure, except the 503 a procedure declares for a server the operator has not set
 * up for it (billing, an OAuth app, an LLM: none is on the shared test server): input valid
 * enough to get past the parse gets that answer by design, whatever else it holds.
 */
const failed = (proc: AnyProcedure, status: number) => status >= 500 && !(status === 503 && restErrorResponses(proc).some((r) => r.status === 503));

/** A refusal must be one the procedure declares (OpenAPI documents those), or the router's own 404. */
function undeclared(proc: AnyProcedure, status: number, detail?: unknown) {
  if (status === 404 && typeof detail === 'string' && detail.startsWith('No route')) return false;
  return !restErrorResponses(proc).some((r) => r.status === status);
}

function fail(proc: AnyProcedure, transport: string, request: string, a: Answer, why: string): never {
  throw new Error(`${proc.name} over ${transport}: ${why}\n${request.slice(0, 500)}\n→ ${a.status} ${a.text.slice(0, 500)}`);
}

// ---- REST ---------------------------------------------------------------------------------

type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; contentType: string | undefined; text: string }
  | { kind: 'form'; fields: Record<string, unknown>; file?: string };

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=latin1',
  'text/plain',
  'application/octet-stream',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/xml',
  undefined,
];
const RAW_TEXTS = ['', '{', '{"a":', '[1,', 'null', '\u0000', '{"__proto__":{"polluted":1}}', '<xml/>', '"a"', '1e999'];

function restArb(proc: AnyProcedure) {
  const names = paramNames(proc);
  const input = fields(proc.input.shape, BODY_STRING, 0);
  const params = fc.tuple(...names.map(() => param));
  const query = fc.array(fc.tuple(text(200), text(200)), { maxLength: 3 });
  const body: fc.Arbitrary<Body> = fc.oneof(
    { weight: 6, arbitrary: fc.constant({ kind: 'json' as const, value: undefined }) },
    { weight: 1, arbitrary: junk(BODY_STRING).map((value) => ({ kind: 'json' as const, value })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...CONTENT_TYPES), fc.oneof(fc.constantFrom(...RAW_TEXTS), text(BODY_STRING)))
        .map(([contentType, t]) => ({ kind: 'raw' as const, contentType, text: t })),
    },
    { weight: 1, arbitrary: fc.option(oddString, { nil: undefined }).map((file) => ({ kind: 'form' as const, fields: {}, file })) },
  );
  return fc.record({ input, params, query, body });
}

/** Builds the request like restCall (path, query, body), then breaks the parts the case asks for. */
async function restRun(proc: AnyProcedure, key: string, c: Case<typeof restArb>) {
  const rest: Record<string, unknown> = { ...c.input };
  let i = 0;
  const path = proc.rest.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const p = c.params[i++]!;
    delete rest[name];
    return 'raw' in p ? p.raw : encodeSegment(asText(paramValue(p, name)));
  });
  const { method } = proc.rest;
  const shape = restShape(proc);
  const noBody = !shape.body;
  const query = new URLSearchParams();
  for (const f of noBody ? Object.keys(rest) : shape.query.filter((f) => f in rest)) {
    query.append(f, asText(rest[f]));
    delete rest[f];
  }
  for (const [k, v] of c.query) query.append(k, v);
  const target = path + (query.size ? `?${query}` : '');
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (proc.secret) headers[proc.secret.header] = 'not-the-secret-0123456789';
  let body: BodyInit | undefined;
  if (!noBody) {
    if (c.body.kind === 'json') {
      body = JSON.stringify(c.body.value !== undefined ? c.body.value : shape.body?.as === 'field' ? rest[shape.body.field] : rest) ?? '';
      headers['content-type'] = 'application/json';
    } else if (c.body.kind === 'raw') {
      body = c.body.text;
      if (c.body.contentType) headers['content-type'] = c.body.contentType;
    } else {
      const form = new FormData();
      for (const [k, v] of Object.entries(rest)) form.append(k, asText(v));
      if (c.body.file !== undefined) form.append('files', new Blob([c.body.file]), c.body.file || 'empty');
      body = form;
    }
  }
  const a = await send(target, { method, headers, body });
  const request = `${method} ${target} ${typeof body === 'string' ? body : ''}`;
  if (tooLongForNode(a, target)) return;
  if (failed(proc, a.status)) fail(proc, 'REST', request, a, 'a 5xx');
  if (shape.tolerant) {
    if (a.status !== shape.status) fail(proc, 'REST', request, a, `not the tolerant ${shape.status}`);
  } else if (a.status >= 400) {
    const detail = json(a.text)?.detail;
    if (typeof detail !== 'string') fail(proc, 'REST', request, a, 'a refusal without {detail}');
    // Dot segments are resolved by the client, so such a request is for another route.
    const resolved = new URL(url + path).pathname === path;
    if (resolved && undeclared(proc, a.status, detail)) fail(proc, 'REST', request, a, 'a refusal the procedure does not declare');
  }
}

// ---- tRPC ---------------------------------------------------------------------------------

/** The raw tRPC wire (httpLink, no transformer): queries are GET ?input=, mutations a JSON POST. */
function trpcArb(proc: AnyProcedure) {
  const max = isRead(proc) ? URL_STRING : BODY_STRING;
  const names = paramNames(proc);
  const input = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(fields(proc.input.shape, max, 0), fc.tuple(...names.map(() => param))) },
    { weight: 1, arbitrary: junk(max).map((j) => [j, []] as const) },
  );
  return fc.record({ input, raw: fc.option(fc.constantFrom(...RAW_TEXTS), { nil: undefined, freq: 8 }) });
}

async function trpcRun(proc: AnyProcedure, key: string, c: Case<typeof trpcArb>) {
  const [value, params] = c.input;
  let input: unknown = value;
  // A junk input has no parameters to fill in.
  if (params.length) {
    input = { ...(value as Record<string, unknown>) };
    paramNames(proc).forEach((name, i) => ((input as Record<string, unknown>)[name] = paramValue(params[i]!, name)));
  }
  const route = `/trpc/${trpcPath(proc).join('.')}`;
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const encoded = c.raw ?? JSON.stringify(input) ?? '';
  const [target, init] = isRead(proc) ? [`${route}?input=${encodeSegment(encoded)}`, { headers }] : [route, { method: 'POST', headers, body: encoded }];
  const a = await send(target, init);
  const request = `${target} ${isRead(proc) ? '' : encoded}`;
  if (tooLongForNode(a, target)) return;
  const error = json(a.text)?.error;
  if (failed(proc, a.status) || failed(proc, error?.data?.httpStatus)) fail(proc, 'tRPC', request, a, 'a 5xx');
  if (a.status >= 400 && typeof error?.message !== 'string') fail(proc, 'tRPC', request, a, 'a refusal without a tRPC error');
  // The same human detail as REST's, inside tRPC's envelope (docs/contract.md, "Errors").
  if (a.status >= 400 && error?.data?.detail !== error?.message) fail(proc, 'tRPC', request, a, 'a tRPC error without its detail in data.detail');
  // Text that is not JSON is refused by tRPC itself, before any procedure.
  if (a.status >= 400 && json(encoded) !== undefined && undeclared(proc, a.status)) fail(proc, 'tRPC', request, a, 'a refusal the procedure does not declare');
}

// ---- MCP ----------------------------------------------------------------------------------

function mcpArb(proc: AnyProcedure) {
  const names = paramNames(proc);
  return fc.tuple(fields(proc.input.shape, BODY_STRING, 0), fc.tuple(...names.map(() => param)));
}

async function mcpRun(proc: AnyProcedure, client: Client, [value, params]: [Record<string, unknown>, Param[]]) {
  const args = { ...value };
  paramNames(proc).forEach((name, i) => (args[name] = paramValue(params[i]!, name)));
  const request = JSON.stringify(args);
  let result;
  try {
    result = await client.callTool({ name: proc.mcp!.tool, arguments: args });
  } catch (err) {
    // Arguments the tool's input schema refuses are a protocol-level refusal, not a crash.
    if (err instanceof McpError && err.code === ErrorCode.InvalidParams) return;
    fail(proc, 'MCP', request, { status: 0, text: String(err) }, 'a protocol error');
  }
  if (!result.isError) return;
  const text = (result.content as Array<{ text?: string }>)[0]?.text ?? '';
  if (/^5\d\d/.test(text) && failed(proc, Number(text.slice(0, 3)))) fail(proc, 'MCP', request, { status: Number(text.slice(0, 3)), text }, 'a 5xx tool error');
  if (!/^(\d{3}:|MCP error -32602)/.test(text)) fail(proc, 'MCP', request, { status: 0, text }, 'a tool error without a status');
  const status = Number(text.slice(0, 3));
  if (status && undeclared(proc, status)) fail(proc, 'MCP', request, { status, text }, 'a refusal the procedure does not declare');
}

// ---- the tests ----------------------------------------------------------------------------

let tenant: Tenant;

beforeAll(async () => {
  // An operator, so admin procedures are fuzzed past their access check too.
  tenant = await newTenant(url, adminKey, { admin: true });
  const memory = await tenant.api('POST', '/v1/memory/collections/fuzz/memories', { text: 'a memory to aim at' });
  if (memory.status !== 201) throw new Error(`memory creation failed: ${memory.status}`);
  const spare = await tenant.newKey('spare');
  Object.assign(real, { collection: 'fuzz', name: 'fuzz', id: memory.body.id, image_index: '0', key_id: spare.id, agent_key_id: spare.id });
});

/** Each test calls with its own key: admin.rotateKey and keys.revoke may end the key they are given. */
// Admin keys, so procedures that need one are fuzzed past their role check too.
const freshKey = async (proc: AnyProcedure, transport: string) => (await tenant.newKey(`fuzz ${proc.name} ${transport}`, false, 'admin')).key;
const options = (runs: number) => ({ seed: SEED, numRuns: runs, interruptAfterTimeLimit: 40_000 });

let mcp: Client | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
});

describe.each(procedures.map((p) => [p.name, p] as [string, AnyProcedure]))('%s', (_name, proc) => {
  it('refuses malformed REST requests without a 5xx, with {detail}', async () => {
    const key = await freshKey(proc, 'REST');
    await fc.assert(
      fc.asyncProperty(restArb(proc), (c) => restRun(proc, key, c)),
      options(RUNS),
    );
  });

  it('refuses malformed tRPC calls without a 5xx, with a tRPC error', async () => {
    const key = await freshKey(proc, 'tRPC');
    await fc.assert(
      fc.asyncProperty(trpcArb(proc), (c) => trpcRun(proc, key, c)),
      options(RUNS),
    );
  });
});

describe.each(procedures.filter((p) => p.mcp).map((p) => [p.name, p] as [string, AnyProcedure]))('%s (MCP tool)', (_name, proc) => {
  it('refuses malformed MCP tool calls without a 5xx or a protocol error', async () => {
    mcp = await mcpClient(url, await freshKey(proc, 'MCP'));
    const client = mcp;
    await fc.assert(
      fc.asyncProperty(mcpArb(proc), (c) => mcpRun(proc, client, c)),
      options(Math.max(1, Math.ceil(RUNS / 3))),
    );
  });
});
