import { afterAll, expect } from 'vitest';
import { newTenant } from './support/client.ts';
import { grantsMatrix } from './support/grants-matrix.ts';
import { signedIn } from './support/people.ts';
import type { AccessState } from './support/samples.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * The grants matrix (test/support/grants-matrix.ts) for a person's key (docs/people.md): the
 * collection's state comes from its scope and grants to teams. Open: an org collection without
 * grants; granted: a grant to the person's team, read-write or read-only (beside a key's); not
 * granted: a team collection of a team the person is not in. Over REST: the other transports
 * reach the same resolver, and test/grants-matrix.test.ts walks them for keys.
 */
let server: TestServer | undefined;
afterAll(() => server?.close());

grantsMatrix(
  "grants matrix for a person's key (generated from the catalogue)",
  async () => {
    server = await startServer();
    const t = await newTenant(server.url, server.adminKey);
    // An admin person, so that grants.put and import reach their grant rules, as the key matrix's admin key.
    const person = await signedIn(server.url, server.app, t, 'matrix@people.test', 'admin');
    const team = (await t.api('POST', '/v1/memory/teams', { name: 'mine' })).body.id as string;
    const elsewhere = (await t.api('POST', '/v1/memory/teams', { name: 'theirs' })).body.id as string;
    expect((await t.api('PUT', `/v1/memory/teams/${team}/members/${person.id}`, { role: 'member' })).status).toBe(200);
    const otherKeyId = (await t.api('GET', '/v1/memory/admin/me')).body.key.id as string;
    async function setState(collection: string, state: AccessState) {
      const changes: Array<[string, string, object]> = {
        open: [],
        'granted-rw': [['PUT', 'grants', { team_id: team, can_read: true, can_write: true }]],
        'granted-read': [
          ['PUT', 'grants', { agent_key_id: otherKeyId, can_read: true, can_write: true }],
          ['PUT', 'grants', { team_id: team, can_read: true, can_write: false }],
        ],
        'not-granted': [['PUT', '', { scope: 'team', teams: [elsewhere] }]],
      }[state] as Array<[string, string, object]>;
      for (const [method, part, body] of changes) {
        const res = await t.api(method, `/v1/memory/collections/${collection}${part ? `/${part}` : ''}`, body);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
      }
    }
    return { url: server.url, t, agent: { id: person.keyId, key: person.key }, otherKeyId, granteeId: team, setState };
  },
  ['rest'],
);
