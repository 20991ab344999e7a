import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedures } from '../procedures/index.ts';
import { isRead, keyRoleOf, type AnyProcedure } from '../src/pipeline/procedure.ts';
import { fill, VALID_BODIES, WRITE_BODIES } from './support/catalogue-calls.ts';
import { call, newTenant, type Tenant } from './support/client.ts';
import { signedIn, type SignedIn } from './support/people.ts';
import { startServer, type TestServer } from './support/server.ts';
import { trpcCall, trpcClient } from './support/transports.ts';

/**
 * Generated from the catalogue, as test/security.test.ts is, for the identities people bring
 * (docs/people.md): a viewer writes nothing, a member manages nothing of the tenant's, a suspended
 * or removed person's session and keys are refused on their next call, and a person of one tenant
 * reaches nothing of another's.
 */
const authed = procedures.filter((p) => p.access !== 'public' && p.access !== 'internal');
const cases = (list: AnyProcedure[]) => list.map((p) => [p.name, p] as [string, AnyProcedure]);
const emptyBody = (proc: AnyProcedure) => (proc.rest.method === 'GET' || proc.rest.method === 'DELETE' ? undefined : {});

let server: TestServer;
let a: Tenant;
let b: Tenant;
let memoryOfA: string;
let viewer: SignedIn;
let member: SignedIn;
let suspended: SignedIn;
let removed: SignedIn;

const path = (proc: AnyProcedure) => fill(proc.rest.path, { collection: 'shared', name: 'shared', id: memoryOfA, image_index: '0' });
const send = (proc: AnyProcedure, key: string, body?: unknown) => call(server.url, proc.rest.method, path(proc), { key, body: body ?? emptyBody(proc) });

beforeAll(async () => {
  server = await startServer();
  a = await newTenant(server.url, server.adminKey);
  b = await newTenant(server.url, server.adminKey);
  memoryOfA = (await a.api('POST', '/v1/memory/collections/shared/memories', { text: 'secret of tenant A' })).body.id;
  await b.api('POST', '/v1/memory/collections/shared/memories', { text: 'memory of tenant B' });
  await signedIn(server.url, server.app, b, 'owner@b.test', 'owner');
  viewer = await signedIn(server.url, server.app, b, 'viewer@b.test', 'viewer');
  member = await signedIn(server.url, server.app, b, 'member@b.test');
  suspended = await signedIn(server.url, server.app, b, 'suspended@b.test');
  removed = await signedIn(server.url, server.app, b, 'removed@b.test');
  expect((await b.api('PATCH', `/v1/memory/people/${suspended.id}`, { state: 'suspended' })).status).toBe(200);
  expect((await b.api('DELETE', `/v1/memory/people/${removed.id}`)).status).toBe(204);
}, 120_000);

afterAll(() => server?.close());

describe.each(cases(authed.filter((p) => !isRead(p))))('%s (a write)', (_name, proc) => {
  it("answers 403 to a viewer's session", async () => {
    const res = await send(proc, viewer.session, WRITE_BODIES[proc.name]);
    expect(res.status).toBe(403);
    // A viewer's role is agent: what needs an admin refuses it for that first.
    expect(res.body.detail).toMatch(keyRoleOf(proc) === 'admin' && !proc.forPerson ? /admin/ : /read-only/);
  });
});

describe.each(cases(authed.filter((p) => keyRoleOf(p) === 'admin' && !p.forPerson)))('%s (needs an admin)', (_name, proc) => {
  it("answers 403 to a member's session and to their key, on REST and tRPC", async () => {
    for (const key of [member.session, member.key]) {
      const res = await send(proc, key, WRITE_BODIES[proc.name]);
      expect(res.status).toBe(403);
      if (proc.access !== 'admin') expect(res.body.detail).toBe(`${proc.name} needs an admin API key; this key's role is agent`);
      expect(await trpcCall(trpcClient(server.url, key), proc, {})).toBe(403);
    }
  });
});

describe.each(cases(authed))('%s', (_name, proc) => {
  it("answers 401 to a suspended person's key and a removed person's session and key", async () => {
    const byKey = await send(proc, suspended.key);
    expect(byKey.status).toBe(401);
    expect(byKey.body.detail).toBe('The person this API key acts for (suspended@b.test) is suspended');
    expect((await send(proc, removed.session)).status).toBe(401);
    expect((await send(proc, removed.key)).body.detail).toBe('The person this API key acts for (removed@b.test) is removed');
  });
});

describe.each(cases(authed.filter((p) => p.rest.path.includes('{id}') && keyRoleOf(p) !== 'admin')))('%s (one memory)', (_name, proc) => {
  it("answers 404 to another tenant's person for a memory of A", async () => {
    for (const key of [member.session, member.key]) {
      const res = await send(proc, key, VALID_BODIES[proc.name]);
      expect(res.status, JSON.stringify(res.body)).toBe(404);
    }
    expect((await a.api('GET', `/v1/memory/collections/shared/memories/${memoryOfA}`)).body.text).toBe('secret of tenant A');
  });
});
