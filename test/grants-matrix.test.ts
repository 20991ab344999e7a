import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedures } from '../procedures/index.ts';
import type { AnyProcedure } from '../src/procedure.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { samples, type AccessState, type Fixture } from './support/samples.ts';
import { mcpCall, mcpClient, restCall, trpcCall, trpcClient } from './support/transports.ts';

/**
 * Generated from the catalogue: every procedure that takes a collection, over REST, tRPC and
 * (when it is an MCP tool) MCP, in each access state of the collection it names. Procedures
 * added later are covered as soon as they are in the catalogue (and need a sample to pass).
 */
const STATES: AccessState[] = ['open', 'granted-rw', 'granted-read', 'not-granted'];

interface Case {
  proc: AnyProcedure;
  /** The input field naming the collection whose state is set. */
  field: string;
  permission: 'read' | 'write';
}

const withCollection = procedures.filter((p) => p.collection);
const cases: Case[] = withCollection.flatMap((proc) => {
  const { field, permission, alsoWrite } = proc.collection!;
  return [{ proc, field, permission }, ...(alsoWrite ? [{ proc, field: alsoWrite, permission: 'write' as const }] : [])];
});

const allowed = (permission: 'read' | 'write', state: AccessState) =>
  state === 'open' || state === 'granted-rw' || (state === 'granted-read' && permission === 'read');

describe('grants matrix (generated from the catalogue)', () => {
  const { url, adminKey } = shared();
  let t: Tenant;
  let agent: { id: string; key: string };
  let ownerKeyId: string;
  let trpc: ReturnType<typeof trpcClient>;
  let mcp: Client;
  let n = 0;

  beforeAll(async () => {
    t = await newTenant(url, adminKey);
    agent = await t.newKey('agent under test');
    ownerKeyId = (await t.api('GET', '/v1/memory/agents')).body.find((a: { id: string }) => a.id !== agent.id).id;
    trpc = trpcClient(url, agent.key);
    mcp = await mcpClient(url, agent.key);
  });
  afterAll(() => mcp?.close());

  /** Two fresh collections with a memory each, written by the tenant's other key while still open. */
  async function fixture(): Promise<Fixture> {
    const [a, b] = [`m${++n}-a`, `m${n}-b`];
    const first = await t.api('POST', `/v1/memory/collections/${a}/memories`, { text: 'fixture memory about lighthouses' });
    const second = await t.api('POST', `/v1/memory/collections/${b}/memories`, { text: 'fixture memory about harbours' });
    const connection = await t.api('POST', '/v1/memory/connections', { provider: 'postgres', collection: a, credentials: {}, config: {} });
    expect([first.status, second.status, connection.status]).toEqual([201, 201, 201]);
    return { tenantId: t.id, collection: a, memoryId: first.body.id, target: b, agentKeyId: agent.id, otherKeyId: ownerKeyId, connectionId: connection.body.id };
  }

  /** Grants made with the other key (a restricted collection always keeps a writer). */
  async function setState(collection: string, state: AccessState) {
    const grants = {
      open: [],
      'granted-rw': [{ agent_key_id: agent.id, can_read: true, can_write: true }],
      'granted-read': [
        { agent_key_id: ownerKeyId, can_read: true, can_write: true },
        { agent_key_id: agent.id, can_read: true, can_write: false },
      ],
      'not-granted': [{ agent_key_id: ownerKeyId, can_read: true, can_write: true }],
    }[state];
    for (const grant of grants) {
      expect((await t.api('PUT', `/v1/memory/collections/${collection}/grants`, grant)).status).toBe(200);
    }
  }

  it('has a sample input for every procedure that takes a collection', () => {
    expect(withCollection.length).toBeGreaterThanOrEqual(15);
    expect(withCollection.filter((p) => !samples[p.name]).map((p) => p.name)).toEqual([]);
  });

  const transports = {
    rest: (proc: AnyProcedure, input: Record<string, unknown>) => restCall(url, agent.key, proc, input).then((r) => r.status),
    trpc: (proc: AnyProcedure, input: Record<string, unknown>) => trpcCall(trpc, proc, input),
    mcp: (proc: AnyProcedure, input: Record<string, unknown>) => mcpCall(mcp, proc, input),
  };

  for (const [transport, callWith] of Object.entries(transports)) {
    const mine = cases.filter((c) => transport !== 'mcp' || c.proc.mcp);
    describe(transport, () => {
      it.each(mine.map((c) => [`${c.proc.name} (${c.field}, ${c.permission})`, c] as const))('%s', async (_, c) => {
        const sample = samples[c.proc.name];
        if (!sample) throw new Error(`no sample input for ${c.proc.name} in test/support/samples.ts`);
        const outcomes: Record<string, unknown> = {};
        const expected: Record<string, unknown> = {};
        for (const state of STATES) {
          const fx = await fixture();
          const input = sample.input(fx);
          // A procedure naming a record of a collection (a connection) is governed by that collection's grants.
          await setState(c.proc.collection!.of ? fx.collection : (input[c.field] as string), state);
          outcomes[state] = await callWith(c.proc, input);
          const override = sample.allowedStatus?.(state);
          const success = transport === 'rest' ? c.proc.rest.status : 'ok';
          expected[state] = allowed(c.permission, state) ? (override ?? success) : 403;
        }
        expect(outcomes).toEqual(expected);
      });
    });
  }
});
