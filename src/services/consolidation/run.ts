import { z } from 'zod';
import type { App, AuthedCtx } from '../../core/context.ts';
import { iso } from '../../core/ids.ts';
import { fromVectorLiteral } from '../../ports/db/db.ts';
import { defineJob } from '../../ports/jobs/jobs.ts';
import type { EvidenceMemory } from '../../schemas/consolidation.ts';
import { actingJob } from '../access/grants.ts';
import { resolveLlm } from '../llm/tenant-llm.ts';
import { getCollection } from '../memory/collections.ts';
import { currentSql } from '../memory/memory-view.ts';
import { changesetRow, createChangeset, storeProposals } from './changesets.ts';
import { llmProposals } from './llm-proposals.ts';
import { heuristicProposals, MERGE_SIMILARITY, type Candidate, type Proposed } from './proposals.ts';
import { applyChanges } from './review.ts';
import { settingsRow } from './schedule.ts';

/*
 * A consolidation run (docs/consolidation.md): reads a collection's current memories, proposes
 * changes, and stores them as a change set for review. It changes no memory by itself, unless the
 * collection's settings name kinds to apply at once; those are applied through the same review
 * path, so they are recorded and undoable like any other.
 */

/** A run reads at most this many current memories, the newest first. */
export const SCAN_MAX = 20_000;
/** A run proposes at most this many changes; the rest wait for the next run. */
export const MAX_CHANGES = 1_000;

export const consolidationJob = actingJob(
  defineJob('consolidate', z.object({ tenant_id: z.uuid(), changeset_id: z.uuid() }), { maxAttempts: 1, lane: 'llm' }),
  {
    subject: async (app, { tenant_id, changeset_id }) => {
      const [row] = await app.db.query<{ collection: string; agent_id: string | null }>(
        'select collection, agent_id from changesets where tenant_id = $1 and id = $2',
        [tenant_id, changeset_id],
      );
      return row && { actor: row.agent_id ? { agent_id: row.agent_id } : { service: 'consolidation' }, collection: row.collection };
    },
    grant: { field: 'collection', permission: 'write' },
  },
);

/** `POST C/consolidate`: a change set, running, and the job that fills it. */
export async function startRun(ctx: AuthedCtx, collection: string, similarity: number | undefined) {
  await getCollection(ctx.app.db, ctx.tenant.id, collection);
  const id = await ctx.app.db.transaction(async (tx) => {
    const changeset = await createChangeset(tx, ctx, ctx.tenant.id, collection, similarity ?? MERGE_SIMILARITY);
    await ctx.app.jobs.enqueue(tx, consolidationJob, { tenant_id: ctx.tenant.id, changeset_id: changeset });
    return changeset;
  });
  return id;
}

/**
 * The hourly schedule over one data database (docs/consolidation.md, "Schedule"): a run, for the
 * consolidation service rather than a key, for each collection whose time has come; its next one
 * a period from now (a service down for a while does not catch up run after run).
 */
export async function startDueRuns(app: App): Promise<number> {
  const due = await app.db.query<{ tenant_id: string; collection: string; every_days: number }>(
    'select tenant_id, collection, every_days from consolidation_settings where next_run_at <= now() order by next_run_at limit 1000',
  );
  let started = 0;
  for (const d of due) {
    // Claimed by moving its next run on, in the transaction that queues this one: two schedulers start it once.
    // (The next time is worked out here: Citus refuses a time computed from a column in a distributed update.)
    const next = new Date(Date.now() + d.every_days * 86_400_000);
    await app.db.transaction(async (tx) => {
      const claimed = await tx.query(
        'update consolidation_settings set next_run_at = $3 where tenant_id = $1 and collection = $2 and next_run_at <= now() returning collection',
        [d.tenant_id, d.collection, next],
      );
      if (!claimed.length) return;
      const changeset = await createChangeset(tx, null, d.tenant_id, d.collection, MERGE_SIMILARITY);
      await app.jobs.enqueue(tx, consolidationJob, { tenant_id: d.tenant_id, changeset_id: changeset });
      started += 1;
    });
  }
  return started;
}

interface CandidateRow extends Omit<Candidate, 'vector' | 'created_at' | 'updated_at' | 'valid_from' | 'valid_to' | 'last_recalled_at'> {
  embedding: string;
  created_at: Date;
  updated_at: Date;
  valid_from: Date;
  valid_to: Date | null;
  last_recalled_at: Date | null;
}

const evidenceOf = (r: Omit<CandidateRow, 'embedding'>): EvidenceMemory => ({
  id: r.id,
  text: r.text,
  category: r.category,
  importance: r.importance,
  pinned: r.pinned,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
  valid_from: iso(r.valid_from)!,
  valid_to: iso(r.valid_to),
  recalls: Number(r.recalls),
  last_recalled_at: iso(r.last_recalled_at),
  confirmations: r.confirmations,
});

const USE = `coalesce(u.recalls, 0)::int as recalls, u.last_recalled_at, coalesce(u.confirmations, 0) as confirmations`;

async function readCandidates(ctx: AuthedCtx, collection: string): Promise<Candidate[]> {
  const rows = await ctx.app.db.query<CandidateRow>(
    `select m.id, m.text, m.category, m.importance, m.pinned, m.created_at, m.updated_at, m.valid_from, m.valid_to, m.container_tag,
            m.embedding::text as embedding, ${USE}
       from memories m left join memory_use u on u.tenant_id = m.tenant_id and u.memory_id = m.id
      where m.tenant_id = $1 and m.collection = $2 and not m.archived and ${currentSql('m')}
      order by m.created_at desc, m.id desc limit ${SCAN_MAX}`,
    [ctx.tenant.id, collection],
  );
  return rows.map((r) => ({ ...evidenceOf(r), vector: fromVectorLiteral(r.embedding), container_tag: r.container_tag }));
}

/** Superseded facts whose validity runs on past their successor's start: each gets its end where the successor starts. */
async function validityFixes(ctx: AuthedCtx, collection: string): Promise<{ proposals: Proposed[]; evidence: EvidenceMemory[] }> {
  const rows = await ctx.app.db.query<Omit<CandidateRow, 'embedding'> & { successor_from: Date }>(
    `select o.id, o.text, o.category, o.importance, o.pinned, o.created_at, o.updated_at, o.valid_from, o.valid_to, ${USE},
            greatest(o.valid_from, n.valid_from) as successor_from
       from memories o join memories n on n.tenant_id = o.tenant_id and n.id = o.superseded_by
       left join memory_use u on u.tenant_id = o.tenant_id and u.memory_id = o.id
      where o.tenant_id = $1 and o.collection = $2 and not o.pinned
        and (o.valid_to is null or o.valid_to > greatest(o.valid_from, n.valid_from))
      order by o.superseded_at desc limit ${MAX_CHANGES}`,
    [ctx.tenant.id, collection],
  );
  return {
    evidence: rows.map(evidenceOf),
    proposals: rows.map((r) => ({
      kind: 'fix_validity' as const,
      keep_id: null,
      memory_ids: [r.id],
      valid_to: iso(r.successor_from),
      members: [r.id],
      similarity: null,
      reason: `Superseded, yet its validity ${r.valid_to ? `runs to ${iso(r.valid_to)}` : 'has no end'}: it stops holding where its successor starts, ${iso(r.successor_from)}`,
      proposed_by: 'heuristic' as const,
    })),
  };
}

/** The job: proposals stored, the change set open (or failed with the reason), auto_apply kinds applied. */
export async function runConsolidation(ctx: AuthedCtx, changesetId: string) {
  const started = performance.now();
  const collection = await collectionOf(ctx, changesetId);
  if (!collection) return;
  const set = await changesetRow(ctx.app.db, ctx.tenant.id, collection, changesetId);
  if (set.state !== 'running') return;
  try {
    const memories = await readCandidates(ctx, set.collection);
    const { proposals, pairs } = await heuristicProposals(memories, set.similarity, Date.now());
    const { llm } = await resolveLlm(ctx.app, ctx.tenant.id);
    const taken = new Set(proposals.filter((p) => p.kind !== 'archive').flatMap((p) => p.members));
    const asked = llm ? await llmProposals(ctx.app, llm, memories, pairs, taken) : { proposals: [], errors: [] };
    const fixes = await validityFixes(ctx, set.collection);
    const all = [...proposals.filter((p) => p.kind !== 'archive'), ...asked.proposals, ...fixes.proposals, ...proposals.filter((p) => p.kind === 'archive')];
    // An LLM merge may take a memory the archive rule also chose: the first change to claim a memory has it.
    const claimed = new Set<string>();
    const kept = all
      .filter((p) => {
        if (p.members.some((id) => claimed.has(id))) return false;
        for (const id of p.members) claimed.add(id);
        return true;
      })
      .slice(0, MAX_CHANGES);
    const evidence = new Map([...memories, ...fixes.evidence].map((m) => [m.id, stripVector(m)]));
    await ctx.app.db.transaction(async (tx) => {
      await storeProposals(tx, ctx.tenant.id, changesetId, kept, evidence);
      await tx.query(
        `update changesets set state = 'open', scanned = $3, errors = $4::jsonb, took_ms = $5, finished_at = now() where tenant_id = $1 and id = $2`,
        [ctx.tenant.id, changesetId, memories.length, asked.errors, Math.round(performance.now() - started)],
      );
    });
  } catch (err) {
    ctx.app.log.error({ err, changeset_id: changesetId }, 'consolidation run failed');
    await failRun(ctx.app, ctx.tenant.id, changesetId, (err as Error).message);
    return;
  }
  const autoApply = (await settingsRow(ctx.app.db, ctx.tenant.id, set.collection))?.auto_apply ?? [];
  if (autoApply.length) {
    const ids = await ctx.app.db.query<{ id: string }>(
      'select id from changeset_changes where tenant_id = $1 and changeset_id = $2 and kind = any($3::text[])',
      [ctx.tenant.id, changesetId, autoApply],
    );
    if (ids.length)
      await applyChanges(
        ctx,
        set.collection,
        changesetId,
        ids.map((r) => r.id),
      );
  }
}

const stripVector = ({ vector: _v, ...m }: Candidate | (EvidenceMemory & { vector?: number[] })): EvidenceMemory => m;

async function collectionOf(ctx: AuthedCtx, changesetId: string) {
  const [row] = await ctx.app.db.query<{ collection: string }>('select collection from changesets where tenant_id = $1 and id = $2', [
    ctx.tenant.id,
    changesetId,
  ]);
  return row?.collection;
}

/** A run that stopped: its change set says why, where the tenant sees it; it proposes nothing. */
export async function failRun(app: App, tenantId: string, changesetId: string, reason: string) {
  await app.db.query(`update changesets set state = 'failed', error = $3, finished_at = now() where tenant_id = $1 and id = $2 and state = 'running'`, [
    tenantId,
    changesetId,
    reason.slice(0, 1000),
  ]);
}
