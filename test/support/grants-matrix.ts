import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedures } from '../../procedures/index.ts';
import type { AnyProcedure } from '../../src/pipeline/procedure.ts';
import { refusablePermissions, type Permission } from '../../src/services/access/grants.ts';
import type { Tenant } from './client.ts';
import { samples, textFile, type AccessState, type Fixture } from './samples.ts';
import { mcpCall, mcpClient, postForm, restCall, trpcCall, trpcClient } from './transports.ts';

/**
 * The grants matrix, generated from the catalogue: every procedure that takes a collection, over
 * REST, tRPC and (when it is an MCP tool) MCP, in each access state of the collection it names,
 * for one identity under test (test/grants-matrix.test.ts: a key; test/grants-matrix-people.test.ts:
 * a person's key, whose states come from scopes and grants to teams). Procedures added later are
 * covered as soon as they are in the catalogue (and need a sample to pass).
 */
const STATES: AccessState[] = ['open', 'granted-rw', 'granted-read', 'not-granted'];

interface Case {
  proc: AnyProcedure;
  /** The fixture's collection whose state is set: one the sample input names, or the one holding the record it names. */
  role: 'collection' | 'target';
  /** What the procedure's rules need on it: write if any of them does. */
  permission: Permission;
}

/** Every procedure whose grant rules can refuse it (a partial rule, import's, skips instead: test/account.test.ts). */
const withCollection = procedures.filter((p) => p.collection && refusablePermissions(p.collection).length);

/** A fixture whose values name its parts, to read which of its collections a sample input touches. */
const symbolic: Fixture = {
  tenantId: 'fx-tenant',
  collection: 'fx-collection',
  memoryId: 'fx-memory',
  target: 'fx-target',
  agentKeyId: 'fx-agent',
  otherKeyId: 'fx-other',
  connectionId: 'fx-connection',
  jobId: 'fx-job',
  batchId: 'fx-batch',
};

/** The collections a procedure's rules touch with its sample input, each with the permission they need. */
function casesOf(proc: AnyProcedure): Case[] {
  const sample = samples[proc.name];
  if (!sample) return [];
  const input = proc.input.parse(sample.input(symbolic)) as Record<string, unknown>;
  const needs = new Map<Case['role'], Permission>();
  for (const rule of [proc.collection!].flat()) {
    if ('collections' in rule && rule.partial) continue;
    // A rule naming a record (a connection, a job, a batch): the fixture's records are in its `collection`.
    const named = 'field' in rule ? [input[rule.field]] : 'of' in rule ? [symbolic.collection] : rule.collections(input);
    for (const name of named.filter((n) => n !== undefined)) {
      const role = name === symbolic.target ? 'target' : name === symbolic.collection ? 'collection' : null;
      if (!role) throw new Error(`${proc.name}: its sample touches "${String(name)}", not a collection of the fixture`);
      if (needs.get(role) !== 'write') needs.set(role, rule.permission);
    }
  }
  return [...needs].map(([role, permission]) => ({ proc, role, permission }));
}
const cases = withCollection.flatMap(casesOf);

const allowed = (permission: 'read' | 'write', state: AccessState) =>
  state === 'open' || state === 'granted-rw' || (state === 'granted-read' && permission === 'read');

/** The identity under test, in its tenant, and how a collection is put in each state (by another identity, so a restricted collection keeps a writer). */
export interface MatrixSubject {
  url: string;
  /** The tenant; its own key writes the fixtures. */
  t: Tenant;
  /** The key under test. */
  agent: { id: string; key: string };
  /** Another key of the tenant, named by samples that grant (grants.put). */
  otherKeyId: string;
  /** Whom the states' grants to the caller name, when not its key (a person's team). */
  granteeId?: string;
  setState(collection: string, state: AccessState): Promise<void>;
}

export function grantsMatrix(name: string, subject: () => Promise<MatrixSubject>, only?: Array<'rest' | 'trpc' | 'mcp'>) {
  describe(name, () => {
    let s: MatrixSubject;
    let trpc: ReturnType<typeof trpcClient>;
    let mcp: Client;
    let n = 0;

    beforeAll(async () => {
      s = await subject();
      trpc = trpcClient(s.url, s.agent.key);
      mcp = await mcpClient(s.url, s.agent.key);
    });
    afterAll(() => mcp?.close());

    /**
     * Two fresh collections with a memory each, written by the tenant's other key while still open,
     * and the records a sample needs in the first.
     */
    async function fixture(needs: Array<'jobId' | 'batchId'> = []): Promise<Fixture> {
      const { t, url, agent } = s;
      const [a, b] = [`m${++n}-a`, `m${n}-b`];
      const first = await t.api('POST', `/v1/memory/collections/${a}/memories`, { text: 'fixture memory about lighthouses' });
      const second = await t.api('POST', `/v1/memory/collections/${b}/memories`, { text: 'fixture memory about harbours' });
      const connection = await t.api('POST', '/v1/memory/connections', { provider: 'postgres', collection: a, credentials: {}, config: {} });
      expect([first.status, second.status, connection.status]).toEqual([201, 201, 201]);
      // The job runs as the key that called remember: the agent's, so it fails (and a retry of it could succeed) only in
      // the states where the agent may not write, which refuse a retry anyway.
      const job = needs.includes('jobId') ? await t.api('POST', `/v1/memory/collections/${a}/remember`, { content: 'I moved to Porto.' }, agent.key) : null;
      const batch = needs.includes('batchId') ? await postForm(url, t.key, `/v1/memory/collections/${a}/drop?async_ingest=true`, { files: [textFile] }) : null;
      expect([job?.status, batch?.status].filter(Boolean)).toEqual(needs.map(() => 202));
      return {
        tenantId: t.id,
        collection: a,
        memoryId: first.body.id,
        target: b,
        agentKeyId: s.granteeId ?? agent.id,
        otherKeyId: s.otherKeyId,
        connectionId: connection.body.id,
        jobId: job?.body.job_id ?? '',
        batchId: batch?.body.batch_id ?? '',
      };
    }

    it('has a sample input for every procedure that takes a collection', () => {
      expect(withCollection.length).toBeGreaterThanOrEqual(15);
      expect(withCollection.filter((p) => !samples[p.name]).map((p) => p.name)).toEqual([]);
      // A sample must touch a collection its procedure's rules name, or the procedure would have no case.
      expect(withCollection.filter((p) => !cases.some((c) => c.proc === p)).map((p) => p.name)).toEqual([]);
    });

    const transports = {
      rest: (proc: AnyProcedure, input: Record<string, unknown>) => restCall(s.url, s.agent.key, proc, input).then((r) => r.status),
      trpc: (proc: AnyProcedure, input: Record<string, unknown>) => trpcCall(trpc, proc, input),
      mcp: (proc: AnyProcedure, input: Record<string, unknown>) => mcpCall(mcp, proc, input),
    };

    for (const [transport, callWith] of Object.entries(transports).filter(([name]) => !only || only.includes(name as 'rest'))) {
      const mine = cases.filter((c) => transport !== 'mcp' || c.proc.mcp);
      describe(transport, () => {
        it.each(mine.map((c) => [`${c.proc.name} (${c.role}, ${c.permission})`, c] as const))('%s', async (_, c) => {
          const sample = samples[c.proc.name]!;
          const outcomes: Record<string, unknown> = {};
          const expected: Record<string, unknown> = {};
          for (const state of STATES) {
            const fx = await fixture(sample.needs);
            const input = sample.input(fx);
            await s.setState(fx[c.role], state);
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
}
