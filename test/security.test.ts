import { beforeAll, describe, expect, it } from 'vitest';
import { procedures } from '../procedures/index.ts';
import { isRead, keyRoleOf, type AnyProcedure } from '../src/pipeline/procedure.ts';
import { call, newTenant, shared, type Tenant } from './support/client.ts';
import { approvedClient } from './support/oauth-client.ts';
import { fill, VALID_BODIES, WRITE_BODIES } from './support/catalogue-calls.ts';
import { mcpCall, mcpClient, restCall, trpcCall, trpcClient } from './support/transports.ts';

/**
 * Generated from the catalogue: every procedure added later is covered without editing
 * this file. Access checks run before input parsing, so any input proves 401/403.
 */
const { url, adminKey } = shared();
const authed = procedures.filter((p) => p.access !== 'public' && p.access !== 'internal');
/** Called by the mail server, not by clients: a shared secret instead of an API key. */
const internal = procedures.filter((p) => p.access === 'internal');

let a: Tenant;
let b: Tenant;
let memoryOfA: string;
let revokedKey: string;
let readOnlyKey: string;
let agentKey: string;
/** Access tokens of MCP clients B approved through OAuth: read-write, and read-only (docs/mcp.md). */
let oauthAgent: string;
let oauthReader: string;
/** An agent key of an operator's tenant: the operator endpoints need its admin keys all the same. */
let operatorAgentKey: string;

beforeAll(async () => {
  a = await newTenant(url, adminKey);
  b = await newTenant(url, adminKey);
  memoryOfA = (await a.api('POST', '/v1/memory/collections/shared/memories', { text: 'secret of tenant A' })).body.id;
  // B has a collection of the same name, so a 404 can only come from tenant scoping.
  await b.api('POST', '/v1/memory/collections/shared/memories', { text: 'memory of tenant B' });
  const spare = await b.newKey('to-revoke');
  expect((await b.api('DELETE', `/v1/memory/keys/${spare.id}`)).status).toBe(204);
  revokedKey = spare.key;
  // An admin key: its writes are refused for being read-only, whatever role they need.
  readOnlyKey = (await b.newKey('reader', true, 'admin')).key;
  agentKey = (await b.newKey('agent')).key;
  oauthAgent = (await approvedClient(url, b.key, { name: 'OAuth agent' })).access;
  oauthReader = (await approvedClient(url, b.key, { name: 'OAuth reader', readWrite: false })).access;
  operatorAgentKey = (await (await newTenant(url, adminKey, { admin: true })).newKey('operator bot')).key;
});

const cases = (list: AnyProcedure[]) => list.map((p) => [p.name, p] as [string, AnyProcedure]);
const path = (proc: AnyProcedure) => fill(proc.rest.path, { collection: 'shared', name: 'shared', id: memoryOfA, image_index: '0' });
const emptyBody = (proc: AnyProcedure) => (proc.rest.method === 'GET' || proc.rest.method === 'DELETE' ? undefined : {});

describe.each(cases(authed))('%s', (_name, proc) => {
  it('answers 401 with WWW-Authenticate without a key', async () => {
    const res = await call(url, proc.rest.method, path(proc), { body: emptyBody(proc) });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.detail).toEqual(expect.any(String));
  });

  it('answers 401 for a revoked key', async () => {
    const res = await call(url, proc.rest.method, path(proc), { key: revokedKey, body: emptyBody(proc) });
    expect(res.status).toBe(401);
  });
});

describe.each(cases(internal))('%s (internal)', (_name, proc) => {
  it('answers 401 without its shared secret or with a wrong one, even to a valid API key', async () => {
    for (const headers of [{}, { [proc.secret!.header]: 'not-the-secret-0123456789' }]) {
      const res = await call(url, proc.rest.method, path(proc), { key: b.key, headers, body: emptyBody(proc) });
      expect(res.status).toBe(401);
      expect(res.body.detail).toContain(proc.secret!.header);
    }
  });
});

it('has a write body for every procedure a dry run makes a read', () => {
  expect(authed.filter((p) => p.readWhen && !WRITE_BODIES[p.name]).map((p) => p.name)).toEqual([]);
});

describe.each(cases(authed.filter((p) => !isRead(p))))('%s (a write)', (_name, proc) => {
  it('answers 403 for a read-only key', async () => {
    const res = await call(url, proc.rest.method, path(proc), { key: readOnlyKey, body: WRITE_BODIES[proc.name] ?? emptyBody(proc) });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(proc.access === 'admin' ? /admin/ : /read-only/);
  });
});

describe.each(cases(authed.filter((p) => p.rest.path.includes('{id}'))))('%s (one memory)', (_name, proc) => {
  it("answers 404 for another tenant's memory id", async () => {
    const res = await call(url, proc.rest.method, path(proc), { key: b.key, body: VALID_BODIES[proc.name] ?? emptyBody(proc) });
    // A 422 here means the procedure needs an entry in VALID_BODIES.
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    const still = await a.api('GET', `/v1/memory/collections/shared/memories/${memoryOfA}`);
    expect(still.body.text).toBe('secret of tenant A');
  });
});

it('admin procedures answer 403 to a tenant that is not an operator', async () => {
  const admins = procedures.filter((p) => p.access === 'admin');
  expect(admins.length).toBeGreaterThan(0);
  for (const proc of admins) {
    const res = await call(url, proc.rest.method, fill(proc.rest.path, {}), { key: a.key, body: emptyBody(proc) });
    expect(res.status, proc.name).toBe(403);
  }
});

it("a tenant cannot revoke another tenant's key", async () => {
  const keyOfA = (await a.api('GET', '/v1/memory/keys')).body[0].id;
  expect((await b.api('DELETE', `/v1/memory/keys/${keyOfA}`)).status).toBe(404);
  expect((await a.api('GET', '/v1/memory/keys')).body[0].revoked_at).toBeNull();
});

/** The procedures only an admin key may call (docs/access.md, "Key roles"), from the catalogue. */
const adminOnly = authed.filter((p) => keyRoleOf(p) === 'admin');

it('keeps the settings that route or expose data for admin keys', () => {
  // The routes an agent key without a grant used to turn into a way to read restricted memories.
  const routing = ['webhook.put', 'extraction.putConfig', 'database.putConfig', 'storage.putConfig', 'keys.create', 'grants.put', 'admin.export'];
  expect(routing.filter((name) => !adminOnly.some((p) => p.name === name))).toEqual([]);
});

it('keeps the operator endpoints for admin keys', () => {
  expect(procedures.filter((p) => p.access === 'admin' && !adminOnly.includes(p)).map((p) => p.name)).toEqual([]);
});

describe.each(cases(adminOnly))('%s (needs an admin key)', (_name, proc) => {
  // An operator endpoint is asked by an agent key of an operator's tenant, so the role is all that refuses it.
  const agentOf = (p: AnyProcedure) => (p.access === 'admin' ? operatorAgentKey : agentKey);
  it('answers 403 naming the admin role to an agent key, on REST, tRPC and MCP', async () => {
    const key = agentOf(proc);
    const rest = await call(url, proc.rest.method, path(proc), { key, body: WRITE_BODIES[proc.name] ?? emptyBody(proc) });
    expect(rest.status).toBe(403);
    expect(rest.body.detail).toBe(`${proc.name} needs an admin API key; this key's role is agent`);
    expect(await trpcCall(trpcClient(url, key), proc, {})).toBe(403);
    if (proc.mcp) {
      const mcp = await mcpClient(url, key);
      expect(await mcpCall(mcp, proc, {})).toBe(403);
      await mcp.close();
    }
  });

  it('is not refused for its role to an admin key', async () => {
    const res = await restCall(url, proc.access === 'admin' ? adminKey : b.key, proc, {});
    expect(res.body?.detail ?? '').not.toMatch(/needs an admin API key/);
  });
});

/*
 * OAuth-issued identities (an MCP client a user approved, docs/mcp.md "Remote MCP with OAuth")
 * authenticate in the same place as keys and are checked by the same pipeline: generated from the
 * catalogue's tools, they are refused as keys are, and their tokens are taken nowhere but /v1/mcp.
 */
const tools = authed.filter((p) => p.mcp);
const mcpInput = (proc: AnyProcedure) => ({ collection: 'shared', name: 'shared', id: memoryOfA, ...((VALID_BODIES[proc.name] ?? {}) as object) });

describe.each(cases(tools.filter((p) => !isRead(p))))('%s (a write, OAuth)', (_name, proc) => {
  it('answers 403 to a client approved read-only', async () => {
    const mcp = await mcpClient(url, oauthReader);
    // A dry run is a read: the write it can be needs its collection named to be judged.
    expect(await mcpCall(mcp, proc, WRITE_BODIES[proc.name] ? { collection: 'shared', ...(WRITE_BODIES[proc.name] as object) } : {})).toBe(403);
    await mcp.close();
  });
});

// An approved client is an agent: an admin tool refuses it for its role first (the case below), whatever the id.
describe.each(cases(tools.filter((p) => p.rest.path.includes('{id}') && keyRoleOf(p) !== 'admin')))('%s (one memory, OAuth)', (_name, proc) => {
  it("answers 404 for another tenant's memory id", async () => {
    const mcp = await mcpClient(url, oauthAgent);
    expect(await mcpCall(mcp, proc, mcpInput(proc))).toBe(404);
    await mcp.close();
    expect((await a.api('GET', `/v1/memory/collections/shared/memories/${memoryOfA}`)).body.text).toBe('secret of tenant A');
  });
});

describe.each(cases(tools.filter((p) => keyRoleOf(p) === 'admin')))('%s (needs an admin key, OAuth)', (_name, proc) => {
  it('answers 403 to an approved client: it is an agent', async () => {
    const mcp = await mcpClient(url, oauthAgent);
    expect(await mcpCall(mcp, proc, {})).toBe(403);
    await mcp.close();
  });
});

describe.each(cases(authed.filter((p) => !p.mcp)))('%s (OAuth token off MCP)', (_name, proc) => {
  it('answers 401 on REST and tRPC: a token is for the MCP endpoint only', async () => {
    const res = await call(url, proc.rest.method, path(proc), { key: oauthAgent, body: emptyBody(proc) });
    expect(res.status).toBe(401);
    expect(await trpcCall(trpcClient(url, oauthAgent), proc, {})).toBe(401);
  });
});

it('grants apply to an approved client as to a key', async () => {
  await b.api('POST', '/v1/memory/collections/guarded/memories', { text: 'guarded memory' });
  const me = (await b.api('GET', '/v1/memory/admin/me')).body.key.id;
  expect((await b.api('PUT', '/v1/memory/collections/guarded/grants', { agent_key_id: me, can_read: true, can_write: true })).status).toBe(200);
  const search = authed.find((p) => p.mcp?.tool === 'search_memory')!;
  const mcp = await mcpClient(url, oauthAgent);
  expect(await mcpCall(mcp, search, { collection: 'guarded', query: 'guarded' })).toBe(403);
  const agents = (await b.api('GET', '/v1/memory/agents')).body as Array<{ id: string; label: string }>;
  const client = agents.find((x) => x.label === 'OAuth agent (OAuth)')!;
  expect((await b.api('PUT', '/v1/memory/collections/guarded/grants', { agent_key_id: client.id, can_read: true, can_write: false })).status).toBe(200);
  expect(await mcpCall(mcp, search, { collection: 'guarded', query: 'guarded' })).toBe('ok');
  await mcp.close();
});
