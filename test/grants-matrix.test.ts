import { expect } from 'vitest';
import { newTenant, shared } from './support/client.ts';
import { grantsMatrix } from './support/grants-matrix.ts';
import type { AccessState } from './support/samples.ts';

/**
 * The grants matrix for a key of no person (test/support/grants-matrix.ts): every procedure that
 * takes a collection, over REST, tRPC and MCP, with the collection open, granted to the key
 * read-write or read-only, or granted to another key only.
 */
grantsMatrix('grants matrix (generated from the catalogue)', async () => {
  const { url, adminKey } = shared();
  const t = await newTenant(url, adminKey);
  // An admin key, so that grants.put and import reach their grant rules: grants bind admin keys as
  // they bind agent keys, and security.test.ts has the roles' own matrix.
  const agent = await t.newKey('agent under test', false, 'admin');
  const otherKeyId = (await t.api('GET', '/v1/memory/agents')).body.find((a: { id: string }) => a.id !== agent.id).id as string;
  /** Grants made with the other key (a restricted collection always keeps a writer). */
  async function setState(collection: string, state: AccessState) {
    const grants = {
      open: [],
      'granted-rw': [{ agent_key_id: agent.id, can_read: true, can_write: true }],
      'granted-read': [
        { agent_key_id: otherKeyId, can_read: true, can_write: true },
        { agent_key_id: agent.id, can_read: true, can_write: false },
      ],
      'not-granted': [{ agent_key_id: otherKeyId, can_read: true, can_write: true }],
    }[state];
    for (const grant of grants) {
      expect((await t.api('PUT', `/v1/memory/collections/${collection}/grants`, grant)).status).toBe(200);
    }
  }
  return { url, t, agent, otherKeyId, setState };
});
