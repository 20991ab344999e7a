import { z } from 'zod';
import { timestamp } from './fields.ts';

/** What a consolidation run may propose (docs/consolidation.md, "What a run proposes"). */
export const CHANGE_KINDS = ['merge', 'supersede', 'archive', 'fix_validity'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export const CHANGESET_STATES = ['running', 'open', 'reviewed', 'failed'] as const;
export const CHANGE_STATES = ['proposed', 'applied', 'rejected', 'undone', 'failed'] as const;
export const SCHEDULES = ['off', 'daily', 'weekly'] as const;
export const changeKind = z.enum(CHANGE_KINDS);

/** A memory as a change's evidence shows it: what the reviewer weighs. */
const evidenceMemory = z.object({
  id: z.string(),
  text: z.string(),
  category: z.string(),
  importance: z.number(),
  pinned: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
  valid_from: timestamp,
  valid_to: timestamp.nullable(),
  recalls: z.number().int().describe('Times search or context handed it to a caller'),
  last_recalled_at: timestamp.nullable(),
  confirmations: z.number().int().describe('Times remember met it again'),
});
export type EvidenceMemory = z.output<typeof evidenceMemory>;

export const proposal = z.object({
  keep_id: z.string().nullable().describe('merge: the memory kept; supersede: the newer memory that replaces the others'),
  memory_ids: z.array(z.string()).describe('The memories the change archives (merge, archive), supersedes (supersede) or corrects (fix_validity)'),
  valid_to: timestamp.nullable().describe('fix_validity: the end of validity the change sets'),
});
export type Proposal = z.output<typeof proposal>;

export const change = z.object({
  id: z.string(),
  kind: changeKind.describe(
    'merge: near-duplicates folded into the one kept; supersede: an outdated fact replaced by a newer one; archive: noise never recalled, of low importance; fix_validity: a superseded fact whose validity still runs past its successor',
  ),
  state: z.enum(CHANGE_STATES).describe('failed: applying found a memory changed, pinned or gone since the proposal (detail says which)'),
  proposal,
  evidence: z.object({
    memories: z.array(evidenceMemory),
    similarity: z.number().nullable().describe('Lowest cosine similarity of a memory to the one kept (merge, supersede)'),
    reason: z.string().describe('Why the change is proposed, in words'),
    proposed_by: z.enum(['heuristic', 'llm']),
  }),
  detail: z.string().nullable(),
  applied_at: timestamp.nullable(),
  undone_at: timestamp.nullable(),
});
export type Change = z.output<typeof change>;

export const changesetSummary = z.object({
  id: z.string(),
  collection: z.string(),
  state: z
    .enum(CHANGESET_STATES)
    .describe('running: the run has not finished; open: changes wait for review; reviewed: none is left proposed; failed: the run stopped (error)'),
  trigger: z.enum(['request', 'schedule']),
  similarity: z.number().describe('The cosine similarity at or above which memories were taken for near-duplicates'),
  scanned: z.number().int().describe('Memories the run read'),
  counts: z.object(Object.fromEntries(CHANGE_STATES.map((s) => [s, z.number().int()])) as Record<(typeof CHANGE_STATES)[number], z.ZodNumber>),
  errors: z
    .array(z.object({ detail: z.string() }))
    .describe('Proposals the run left out (an LLM reply that failed its schema), each on its own: the run went on'),
  error: z.string().nullable(),
  took_ms: z.number().int().nullable(),
  created_at: timestamp,
  finished_at: timestamp.nullable(),
});

export const changesetView = changesetSummary.extend({ changes: z.array(change) }).openapi('ChangeSet');
export type ChangesetView = z.output<typeof changesetView>;

export const consolidationSettings = z
  .object({
    schedule: z.enum(SCHEDULES).describe('How often a run starts on its own; off by default'),
    auto_apply: z.array(changeKind).describe('Kinds a scheduled or requested run applies at once (still recorded, undoable); none by default'),
    next_run_at: timestamp.nullable(),
  })
  .openapi('ConsolidationSettings');
