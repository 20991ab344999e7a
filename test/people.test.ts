import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, type Tenant } from './support/client.ts';
import { signedIn, type SignedIn } from './support/people.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';
import { startReceiver } from './fakes/webhook-receiver.ts';

/**
 * People, teams and scopes (docs/people.md) over real HTTP: who reads and writes which
 * collection, what a person's key may do, and what suspending or removing a person ends.
 */
let server: TestServer;
let org: Tenant;
let other: Tenant;
let owner: SignedIn;
let ana: SignedIn;
let ben: SignedIn;
let cleo: SignedIn;
let viewer: SignedIn;
let payments: string;
let search: string;

const as = (key: string, method: string, path: string, body?: unknown) => call(server.url, method, path, { key, body });
const readable = async (key: string) => ((await as(key, 'GET', '/v1/memory/collections')).body as Array<{ name: string }>).map((c) => c.name).sort();

beforeAll(async () => {
  server = await startServer();
  org = await newTenant(server.url, server.adminKey);
  other = await newTenant(server.url, server.adminKey);
  owner = await signedIn(server.url, server.app, org, 'owner@acme.test', 'owner');
  ana = await signedIn(server.url, server.app, org, 'ana@acme.test');
  ben = await signedIn(server.url, server.app, org, 'ben@acme.test');
  cleo = await signedIn(server.url, server.app, org, 'cleo@acme.test');
  viewer = await signedIn(server.url, server.app, org, 'vic@acme.test', 'viewer');
  payments = (await org.api('POST', '/v1/memory/teams', { name: 'Payments', provider_group: 'payments-eng' })).body.id;
  search = (await org.api('POST', '/v1/memory/teams', { name: 'Search' })).body.id;
  for (const [team, person] of [
    [payments, ana.id],
    [payments, ben.id],
    [search, cleo.id],
  ]) {
    expect((await org.api('PUT', `/v1/memory/teams/${team}/members/${person}`, { role: 'member' })).status).toBe(200);
  }
}, 120_000);

afterAll(() => server?.close());

describe('people', () => {
  it('lists people with their roles, states and teams', async () => {
    const people = (await org.api('GET', '/v1/memory/people')).body as Array<{ email: string; role: string; state: string; teams: Array<{ name: string }> }>;
    const byEmail = new Map(people.map((p) => [p.email, p]));
    expect(byEmail.get('ana@acme.test')).toMatchObject({ role: 'member', state: 'active', teams: [{ name: 'Payments', role: 'member' }] });
    expect(byEmail.get('owner@acme.test')!.role).toBe('owner');
    expect(byEmail.get('vic@acme.test')!.role).toBe('viewer');
  });

  it('an invitation sends a mail and a second one for the same address is a 409', async () => {
    const res = await org.api('POST', '/v1/memory/people', { email: 'dora@acme.test', role: 'member' });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('invited');
    const mail = await until('the invitation mail', async () => {
      const [row] = await server.app.db.query<{ body: string }>('select body from mail_outbox where recipient = $1', ['dora@acme.test']);
      return row?.body;
    });
    expect(mail).toContain(`/v1/auth/oidc/start?tenant=${org.id}`);
    const again = await org.api('POST', '/v1/memory/people', { email: 'DORA@acme.test' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('DORA@acme.test');
  });

  it('refuses bad input with a clear detail', async () => {
    expect((await org.api('POST', '/v1/memory/people', { email: 'not an address' })).status).toBe(422);
    expect((await org.api('POST', '/v1/memory/people', { email: 'x@acme.test', role: 'emperor' })).status).toBe(422);
    expect((await org.api('PATCH', '/v1/memory/people/not-a-uuid', { role: 'admin' })).status).toBe(404);
    const removed = await org.api('PATCH', `/v1/memory/people/${ana.id}`, { state: 'removed' });
    expect(removed.status).toBe(422);
  });

  it('a member may not manage people, and only an owner makes an owner', async () => {
    const byMember = await as(ana.session, 'POST', '/v1/memory/people', { email: 'eve@acme.test' });
    expect(byMember.status).toBe(403);
    const admin = await signedIn(server.url, server.app, org, 'adm@acme.test', 'admin');
    const promote = await as(admin.session, 'PATCH', `/v1/memory/people/${ben.id}`, { role: 'owner' });
    expect(promote.status).toBe(403);
    expect(promote.body.detail).toContain('owner');
    expect((await as(owner.session, 'PATCH', `/v1/memory/people/${admin.id}`, { role: 'member' })).body.role).toBe('member');
  });

  it('the last active owner keeps the role', async () => {
    const res = await as(owner.session, 'PATCH', `/v1/memory/people/${owner.id}`, { role: 'admin' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('owner');
  });

  it('a person of another tenant is no person here: 404, never a grant or a team member', async () => {
    expect((await other.api('PATCH', `/v1/memory/people/${ana.id}`, { role: 'viewer' })).status).toBe(404);
    expect((await other.api('DELETE', `/v1/memory/people/${ana.id}`)).status).toBe(404);
    await other.api('POST', '/v1/memory/collections/theirs/memories', { text: 'of the other tenant' });
    expect((await other.api('PUT', '/v1/memory/collections/theirs/grants', { person_id: ana.id, can_read: true, can_write: true })).status).toBe(404);
    expect((await other.api('PUT', '/v1/memory/collections/theirs/grants', { team_id: payments, can_read: true, can_write: true })).status).toBe(404);
    const team = (await other.api('POST', '/v1/memory/teams', { name: 'Payments' })).body.id;
    expect((await other.api('PUT', `/v1/memory/teams/${team}/members/${ana.id}`, {})).status).toBe(404);
    // Ana's own session and key see nothing of the other tenant.
    expect(await readable(ana.session)).not.toContain('theirs');
    expect((await as(ana.key, 'GET', '/v1/memory/collections/theirs/memories')).status).toBe(404);
  });
});

describe('scopes', () => {
  beforeAll(async () => {
    expect((await as(ana.session, 'POST', '/v1/memory/collections', { name: 'ana-notes', scope: 'personal' })).body.owner).toBe(ana.id);
    const team = await as(ana.session, 'POST', '/v1/memory/collections', { name: 'payments-runbooks', scope: 'team', teams: [payments] });
    expect(team.status, JSON.stringify(team.body)).toBe(201);
    expect((await org.api('POST', '/v1/memory/collections', { name: 'policies', scope: 'org' })).status).toBe(201);
    for (const [key, collection, text] of [
      [ana.key, 'ana-notes', 'Ana keeps her standup notes here'],
      [ana.key, 'payments-runbooks', 'Refunds over 500 EUR need a second approver'],
      [org.key, 'policies', 'Every laptop uses disk encryption'],
    ]) {
      expect((await as(key!, 'POST', `/v1/memory/collections/${collection}/memories`, { text })).status).toBe(201);
    }
  });

  it("a personal collection is its owner's alone: not a teammate's, not a key of no person", async () => {
    expect(await readable(ana.key)).toEqual(expect.arrayContaining(['ana-notes', 'payments-runbooks', 'policies']));
    expect(await readable(ben.key)).not.toContain('ana-notes');
    expect(await readable(org.key)).not.toContain('ana-notes');
    expect((await as(ben.key, 'GET', '/v1/memory/collections/ana-notes/memories')).status).toBe(403);
    expect((await as(ben.key, 'POST', '/v1/memory/collections/ana-notes/memories', { text: 'sneaked in' })).status).toBe(403);
  });

  it("a team collection is its teams' people's: found by a teammate's agent, not by another team's", async () => {
    const byBen = await as(ben.key, 'POST', '/v1/memory/search', { query: 'refunds second approver', limit: 5 });
    expect(byBen.status).toBe(200);
    expect(byBen.body.results.map((r: { text: string }) => r.text)).toContain('Refunds over 500 EUR need a second approver');
    const byCleo = await as(cleo.key, 'POST', '/v1/memory/search', { query: 'refunds second approver', limit: 5 });
    expect(byCleo.body.results.map((r: { text: string }) => r.text)).not.toContain('Refunds over 500 EUR need a second approver');
    expect((await as(cleo.key, 'POST', '/v1/memory/collections/payments-runbooks/search', { query: 'refunds' })).status).toBe(403);
    // A key of no person is in no team.
    expect((await as(org.key, 'GET', '/v1/memory/collections/payments-runbooks/memories')).status).toBe(403);
  });

  it("an org collection is everyone's; a viewer reads it and writes nothing", async () => {
    for (const key of [ana.key, cleo.key, viewer.session, org.key]) expect(await readable(key)).toContain('policies');
    const write = await as(viewer.session, 'POST', '/v1/memory/collections/policies/memories', { text: 'a viewer writes' });
    expect(write.status).toBe(403);
    expect(write.body.detail).toContain('read-only');
  });

  it("a person's agent writes on their behalf", async () => {
    const res = await as(ben.key, 'POST', '/v1/memory/collections/payments-runbooks/memories', { text: 'Chargebacks are answered within 7 days' });
    expect(res.status).toBe(201);
    expect(res.body.created_by.id).toBe(ben.keyId);
    expect(res.body.on_behalf_of).toEqual({ id: ben.id, label: 'ben@acme.test' });
    const own = await as(ben.session, 'POST', '/v1/memory/collections/payments-runbooks/memories', { text: 'Disputes go to the payments inbox' });
    expect(own.body.created_by.id).toBe(ben.id);
    expect(own.body.on_behalf_of).toBeNull();
  });

  it('grants name people and teams; a key that acts for a person is granted through them', async () => {
    await org.api('POST', '/v1/memory/collections', { name: 'incidents' });
    await org.api('POST', '/v1/memory/collections/incidents/memories', { text: 'The outage of March was a full disk' });
    const me = (await org.api('GET', '/v1/memory/admin/me')).body.key.id;
    expect((await org.api('PUT', '/v1/memory/collections/incidents/grants', { agent_key_id: me, can_read: true, can_write: true })).status).toBe(200);
    expect((await as(cleo.key, 'GET', '/v1/memory/collections/incidents/memories')).status).toBe(403);
    const bySearchTeam = await org.api('PUT', '/v1/memory/collections/incidents/grants', { team_id: search, can_read: true, can_write: false });
    expect(bySearchTeam.body).toMatchObject({ kind: 'team', id: search, agent_key_id: null, label: 'Search', can_read: true, can_write: false });
    expect((await as(cleo.key, 'GET', '/v1/memory/collections/incidents/memories')).status).toBe(200);
    expect((await as(cleo.key, 'POST', '/v1/memory/collections/incidents/memories', { text: 'cleo writes' })).status).toBe(403);
    expect((await as(ana.key, 'GET', '/v1/memory/collections/incidents/memories')).status).toBe(403);
    expect((await org.api('PUT', '/v1/memory/collections/incidents/grants', { person_id: ana.id, can_read: true, can_write: true })).status).toBe(200);
    expect((await as(ana.key, 'POST', '/v1/memory/collections/incidents/memories', { text: 'ana writes' })).status).toBe(201);
    // Granting the key itself would let it past its person: refused.
    const direct = await org.api('PUT', '/v1/memory/collections/incidents/grants', { agent_key_id: ben.keyId, can_read: true, can_write: true });
    expect(direct.status).toBe(400);
    expect(direct.body.detail).toContain('acts for a person');
    const two = await org.api('PUT', '/v1/memory/collections/incidents/grants', { person_id: ana.id, team_id: search, can_read: true, can_write: true });
    expect(two.status).toBe(400);
    const listed = (await org.api('GET', '/v1/memory/collections/incidents/grants')).body.grants.map((g: { kind: string }) => g.kind);
    expect(listed.sort()).toEqual(['key', 'person', 'team']);
    expect((await org.api('DELETE', `/v1/memory/collections/incidents/grants/${search}`)).status).toBe(204);
    expect((await as(cleo.key, 'GET', '/v1/memory/collections/incidents/memories')).status).toBe(403);
  });

  it("a scope is checked: teams you are in, owners who exist, and a change is an admin's", async () => {
    expect((await as(cleo.session, 'POST', '/v1/memory/collections', { name: 'not-mine', scope: 'team', teams: [payments] })).status).toBe(403);
    expect((await as(cleo.session, 'POST', '/v1/memory/collections', { name: 'nobody', scope: 'team', teams: [] })).status).toBe(400);
    expect(
      (await as(cleo.session, 'POST', '/v1/memory/collections', { name: 'ghost', scope: 'team', teams: ['0190a0a0-0000-7000-8000-000000000000'] })).status,
    ).toBe(404);
    expect((await org.api('POST', '/v1/memory/collections', { name: 'keyless', scope: 'personal' })).status).toBe(400);
    expect((await as(cleo.session, 'POST', '/v1/memory/collections', { name: 'for-ana', scope: 'personal', owner: ana.id })).status).toBe(403);
    expect((await as(ana.session, 'PUT', '/v1/memory/collections/ana-notes', { scope: 'org' })).status).toBe(403);
    expect((await org.api('GET', '/v1/memory/collections')).body.map((c: { name: string }) => c.name)).not.toContain('not-mine');
  });

  it("a person's hook capture lands in a collection personal to them", async () => {
    const res = await call(server.url, 'POST', '/v1/memory/collections/ben-sessions/memories', {
      key: ben.key,
      headers: { 'x-orgmem-via': 'hook' },
      body: { text: 'Ben prefers squash merges' },
    });
    expect(res.status).toBe(201);
    const collection = await as(ben.key, 'GET', '/v1/memory/collections/ben-sessions');
    expect(collection.body).toMatchObject({ scope: 'personal', owner: ben.id });
    expect((await as(ana.key, 'GET', '/v1/memory/collections/ben-sessions/memories')).status).toBe(403);
  });
});

describe('suspending and removing', () => {
  it("ends a person's sessions and refuses their keys on the next call, until restored", async () => {
    const dan = await signedIn(server.url, server.app, org, 'dan@acme.test');
    expect((await as(dan.key, 'GET', '/v1/memory/collections')).status).toBe(200);
    expect((await org.api('PATCH', `/v1/memory/people/${dan.id}`, { state: 'suspended' })).body.state).toBe('suspended');
    const byKey = await as(dan.key, 'GET', '/v1/memory/collections');
    expect(byKey.status).toBe(401);
    expect(byKey.body.detail).toBe('The person this API key acts for (dan@acme.test) is suspended');
    expect((await as(dan.session, 'GET', '/v1/memory/collections')).status).toBe(401);
    expect((await org.api('PATCH', `/v1/memory/people/${dan.id}`, { state: 'active' })).status).toBe(200);
    expect((await as(dan.key, 'GET', '/v1/memory/collections')).status).toBe(200);
    // The session ended for good: a restored person signs in again.
    expect((await as(dan.session, 'GET', '/v1/memory/collections')).body.detail).toBe('This session has ended: sign in again');
    expect((await org.api('DELETE', `/v1/memory/people/${dan.id}`)).status).toBe(204);
    expect((await as(dan.key, 'GET', '/v1/memory/collections')).body.detail).toBe('The person this API key acts for (dan@acme.test) is removed');
    expect((await org.api('GET', '/v1/memory/people')).body.map((p: { email: string }) => p.email)).not.toContain('dan@acme.test');
    expect((await org.api('GET', '/v1/memory/people?state=removed')).body.map((p: { email: string }) => p.email)).toContain('dan@acme.test');
    expect((await org.api('DELETE', `/v1/memory/people/${dan.id}`)).status).toBe(404);
  });

  it('role changes, suspensions and removals are webhook events', async () => {
    const receiver = await startReceiver();
    try {
      const t = await newTenant(server.url, server.adminKey);
      expect((await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).status).toBe(200);
      const fay = await signedIn(server.url, server.app, t, 'fay@acme.test');
      await t.api('PATCH', `/v1/memory/people/${fay.id}`, { role: 'admin' });
      await t.api('PATCH', `/v1/memory/people/${fay.id}`, { state: 'suspended' });
      await t.api('DELETE', `/v1/memory/people/${fay.id}`);
      const events = await until('three person events', async () => {
        const got = receiver.received
          .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
          .filter((e) => e.type.startsWith('person.'));
        return got.length >= 3 ? got : undefined;
      });
      const person = { id: fay.id, email: 'fay@acme.test' };
      expect(events).toEqual([
        expect.objectContaining({ type: 'person.role_changed', data: { person, from: 'member', to: 'admin' } }),
        expect.objectContaining({ type: 'person.suspended', data: { person } }),
        expect.objectContaining({ type: 'person.removed', data: { person } }),
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('a removed person is out of their teams', async () => {
    const eli = await signedIn(server.url, server.app, org, 'eli@acme.test');
    await org.api('PUT', `/v1/memory/teams/${search}/members/${eli.id}`, { role: 'admin' });
    await org.api('DELETE', `/v1/memory/people/${eli.id}`);
    const team = ((await org.api('GET', '/v1/memory/teams')).body as Array<{ id: string; members: Array<{ person_id: string }> }>).find(
      (t) => t.id === search,
    )!;
    expect(team.members.map((m) => m.person_id)).not.toContain(eli.id);
  });
});

describe('teams', () => {
  it('names and provider groups are unique; a team admin manages members, a member does not', async () => {
    expect((await org.api('POST', '/v1/memory/teams', { name: 'payments' })).status).toBe(409);
    const dup = await org.api('POST', '/v1/memory/teams', { name: 'Billing', provider_group: 'payments-eng' });
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toContain('payments-eng');
    expect((await as(ben.session, 'PUT', `/v1/memory/teams/${payments}/members/${cleo.id}`, {})).status).toBe(403);
    await org.api('PUT', `/v1/memory/teams/${payments}/members/${ana.id}`, { role: 'admin' });
    expect((await as(ana.session, 'PUT', `/v1/memory/teams/${payments}/members/${cleo.id}`, {})).status).toBe(200);
    expect((await as(ana.session, 'DELETE', `/v1/memory/teams/${payments}/members/${cleo.id}`)).status).toBe(204);
    expect((await as(ana.session, 'DELETE', `/v1/memory/teams/${payments}/members/${cleo.id}`)).status).toBe(404);
    expect((await org.api('POST', '/v1/memory/teams', { name: '' })).status).toBe(422);
  });
});
