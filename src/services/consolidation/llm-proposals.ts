import type { App } from '../../core/context.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import { consolidate } from '../llm/calls.ts';
import { LlmOutputError, type TenantLlm } from '../llm/tenant-llm.ts';
import type { Pair } from './near-pairs.ts';
import { keeperFirst, type Candidate, type Proposed } from './proposals.ts';

/*
 * With the tenant's LLM (docs/consolidation.md, "With an LLM"): groups of alike memories that the
 * offline rules left whole are shown to it, one call per group, and it may propose merges and
 * supersessions among them. A reply that fails its schema or its check twice, or an endpoint that
 * does not answer, leaves that group's proposal out and is named in the change set's errors: the
 * run goes on with the next group.
 */

/** Memories this alike are shown together. */
export const LLM_SIMILARITY = 0.8;
const GROUP_MAX = 10;
const GROUPS_MAX = 20;
const TEXT_MAX = 1_000;

/** Connected groups of alike memories none of whose members another change took, each cut to GROUP_MAX in keeper order. */
function groups(memories: Candidate[], pairs: Pair[], taken: Set<string>): Candidate[][] {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const links = new Map<string, string[]>();
  for (const p of pairs) {
    if (p.similarity < LLM_SIMILARITY || taken.has(p.a) || taken.has(p.b) || byId.get(p.a)!.container_tag !== byId.get(p.b)!.container_tag) continue;
    links.set(p.a, [...(links.get(p.a) ?? []), p.b]);
    links.set(p.b, [...(links.get(p.b) ?? []), p.a]);
  }
  const seen = new Set<string>();
  const out: Candidate[][] = [];
  for (const start of links.keys()) {
    if (seen.has(start)) continue;
    const group: string[] = [];
    const stack = [start];
    seen.add(start);
    while (stack.length) {
      const id = stack.pop()!;
      group.push(id);
      for (const next of links.get(id) ?? []) if (!seen.has(next)) (stack.push(next), seen.add(next));
    }
    out.push(
      group
        .map((id) => byId.get(id)!)
        .sort(keeperFirst)
        .slice(0, GROUP_MAX),
    );
  }
  return out.slice(0, GROUPS_MAX);
}

export async function llmProposals(app: App, llm: TenantLlm, memories: Candidate[], pairs: Pair[], taken: Set<string>) {
  const proposals: Proposed[] = [];
  const errors: Array<{ detail: string }> = [];
  for (const group of groups(memories, pairs, taken)) {
    const ids = new Set(group.map((m) => m.id));
    const pinned = new Set(group.filter((m) => m.pinned).map((m) => m.id));
    const message = {
      memories: group.map((m) => ({
        id: m.id,
        text: m.text.slice(0, TEXT_MAX),
        type: m.category,
        stored_at: m.created_at,
        valid_from: m.valid_from,
        recalls: m.recalls,
      })),
    };
    try {
      const reply = await llm.call(consolidate, JSON.stringify(message), {
        check: (r) => {
          for (const c of r.changes) {
            const named = [c.keep_id, ...c.memory_ids];
            const stranger = named.find((id) => !ids.has(id));
            if (stranger !== undefined) return `${stranger} is not one of the memories shown`;
            if (!c.memory_ids.length) return 'a change replaces no memory';
            if (c.memory_ids.includes(c.keep_id)) return `keep_id ${c.keep_id} is also among the memories it replaces`;
            const held = c.memory_ids.find((id) => pinned.has(id));
            if (held) return `${held} is pinned: it cannot be replaced`;
          }
          return null;
        },
      });
      const claimed = new Set<string>();
      for (const c of reply.changes) {
        const members = [c.keep_id, ...new Set(c.memory_ids)];
        // Two changes of one reply over the same memory: the first stands.
        if (members.some((id) => claimed.has(id))) continue;
        for (const id of members) claimed.add(id);
        proposals.push({
          kind: c.kind,
          keep_id: c.keep_id,
          memory_ids: members.slice(1),
          valid_to: null,
          members,
          similarity: minSimilarity(pairs, c.keep_id, members.slice(1)),
          reason: c.reason.slice(0, 500) || 'Proposed by the LLM',
          proposed_by: 'llm',
        });
      }
    } catch (err) {
      if (!(err instanceof LlmOutputError || err instanceof LlmUnavailableError)) throw err;
      app.log.warn({ err, memories: [...ids] }, 'consolidation: the LLM proposal for a group failed; left out');
      errors.push({ detail: `The LLM's proposal for memories ${[...ids].join(', ')} was left out: ${err.message}` });
    }
  }
  return { proposals, errors };
}

function minSimilarity(pairs: Pair[], keep: string, others: string[]): number | null {
  const found = others.map((o) => pairs.find((p) => (p.a === keep && p.b === o) || (p.b === keep && p.a === o))?.similarity);
  return found.every((s) => s !== undefined) ? Math.min(...(found as number[])) : null;
}
