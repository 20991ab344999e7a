import { createHash } from 'node:crypto';
import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, invalidInput } from '../../core/errors.ts';
import { iso, newId } from '../../core/ids.ts';
import { toVectorLiteral, type Queryable } from '../../ports/db/db.ts';
import { LlmUnavailableError } from '../../ports/llm/llm.ts';
import type { FactOutcome, Relation } from '../../schemas/graph.ts';
import type { Quarantine, TrustClass } from '../../schemas/trust.ts';
import { extractFacts, judgeFacts } from '../llm/calls.ts';
import { LlmOutputError, resolveLlm, type TenantLlm } from '../llm/tenant-llm.ts';
import { touchCollection } from '../memory/collections.ts';
import { archiveMemories, supersedeMemory } from '../memory/lifecycle.ts';
import { createMemories, insertMemories, type NewMemory } from '../memory/memories.ts';
import { currentSql } from '../memory/memory-view.ts';
import { createJob, extractionJob, finishJob } from './extraction-jobs.ts';
import { DUPLICATE_SIMILARITY, heuristicFacts, junkReason, normalizeFact, withoutPrivate, type ExtractedFact } from './fact-heuristics.ts';

export interface RememberInput {
  content: string;
  importance: number;
  /** The sub-namespace (an end-user...) the raw memory and its facts belong to. */
  container_tag?: string | null;
  /** When the text was written or said (its event time); extraction resolves relative dates against it. */
  observed_at?: string;
}

export interface ExtractionOutcome {
  facts: FactOutcome[];
  skipped: 'spend_cap' | null;
}

/** The raw memory a remember stores before anything else, whatever extraction does later. */
export interface RawMemory {
  id: string;
  text: string;
  importance: number;
  container_tag: string | null;
  observed_at: Date | string;
  trust: TrustClass;
  quarantine: Quarantine | null;
}

const FACT_TYPES = ['fact', 'preference', 'episode'];
// Bounds on what one remember can cost: facts kept from one text, neighbours judged per fact.
const MAX_FACTS = 50;
const NEIGHBOURS = 5;
/** How much a confirmation raises the confirmed memory's importance, up to 1 (docs/graph.md, "Confirmed, not stored again"). */
export const CONFIRMATION_STEP = 0.05;
/** What a raw memory holds when its whole text was private. */
const ALL_PRIVATE = '[private]';

// `<private>` text is never stored, whoever sends it (docs/graph.md, "What remember keeps").
const rawItem = (input: RememberInput): NewMemory => ({
  text: withoutPrivate(input.content) || ALL_PRIVATE,
  importance: input.importance,
  category: 'other',
  source: 'remember',
  metadata: {},
  container_tag: input.container_tag ?? null,
  observed_at: input.observed_at,
});

/**
 * Default remember: the raw memory, its job row and the queued job commit together, with the
 * idempotency key when one is sent. The same key with the same body answers the first request's
 * job and stores nothing (docs/contract.md, "Retries and idempotency").
 */
export async function rememberQueued(ctx: AuthedCtx, collection: string, input: RememberInput & { idempotency_key?: string }) {
  const key = input.idempotency_key;
  const hash = key === undefined ? '' : bodyHash(collection, input);
  // A retry is answered before the embedding it does not need; the insert below is what decides.
  const earlier = key === undefined ? undefined : await keyedJob(ctx.app.db, ctx.tenant.id, key, hash);
  if (earlier) return { job_id: earlier, state: 'queued' as const };
  const embeddings = await ctx.app.embedder.embed([input.content]);
  const jobId = await ctx.app.db.transaction(async (tx) => {
    const id = newId();
    if (key !== undefined) {
      const taken = await tx.query(
        'insert into remember_keys (tenant_id, idempotency_key, body_hash, job_id) values ($1, $2, $3, $4) on conflict do nothing returning job_id',
        [ctx.tenant.id, key, hash, id],
      );
      // Another request with this key committed first (a concurrent retry): its job is the answer.
      if (!taken.length) return (await keyedJob(tx, ctx.tenant.id, key, hash))!;
    }
    const [raw] = await insertMemories(tx, ctx, collection, [rawItem(input)], embeddings);
    await createJob(tx, ctx, { id, collection, memoryId: raw!.id });
    await ctx.app.jobs.enqueue(tx, extractionJob, { tenant_id: ctx.tenant.id, job_id: id });
    return id;
  });
  return { job_id: jobId, state: 'queued' as const };
}

/** How long a remember's Idempotency-Key is kept, as an import's (docs/contract.md, "Retries and idempotency"). */
export const REMEMBER_KEY_KEPT_DAYS = 7;

/** Drops the remember keys of `data` (a data database) older than REMEMBER_KEY_KEPT_DAYS: the hourly writes sweep. */
export async function dropOldRememberKeys(data: App): Promise<number> {
  const rows = await data.db.query(`delete from remember_keys where created_at < now() - make_interval(days => $1) returning job_id`, [REMEMBER_KEY_KEPT_DAYS]);
  return rows.length;
}

const bodyHash = (collection: string, input: RememberInput) =>
  createHash('sha256')
    .update(JSON.stringify([collection, input.content, input.importance, input.container_tag ?? null, input.observed_at ?? null]))
    .digest('hex');

/** The job of an earlier remember with this key and body; a 422 when the key came with another body. */
async function keyedJob(q: Queryable, tenantId: string, key: string, hash: string): Promise<string | undefined> {
  const [row] = await q.query<{ job_id: string; body_hash: string }>(
    'select job_id, body_hash from remember_keys where tenant_id = $1 and idempotency_key = $2',
    [tenantId, key],
  );
  if (row && row.body_hash !== hash) {
    throw invalidInput([{ path: 'idempotency_key', message: 'This Idempotency-Key was used with another body: send a new key for new text' }]);
  }
  return row?.job_id;
}

/** `sync=true`: the same pipeline inside the request. An LLM failure is a 502; the raw memory stays. */
export async function rememberNow(ctx: AuthedCtx, collection: string, input: RememberInput) {
  const [raw] = await createMemories(ctx, collection, [rawItem(input)]);
  try {
    const { facts, skipped } = await extractAndStore(ctx, collection, raw!, null);
    return { created: facts.filter((f) => f.relation !== 'duplicate').length, memories: facts, skipped };
  } catch (err) {
    if (err instanceof LlmUnavailableError || err instanceof LlmOutputError) {
      throw new AppError('BAD_GATEWAY', `Fact extraction failed (${err.message}); the raw memory ${raw!.id} is stored`);
    }
    throw err;
  }
}

/**
 * Extracts typed facts from a raw memory, judges each against the most similar current facts
 * of the collection, and stores the outcome in one transaction (with the job's final state when
 * `jobId` is given): new facts inserted, superseded ones linked to their successors, the raw
 * memory archived once its facts exist. Every LLM call and embedding happens before that
 * transaction; a failure anywhere before it writes nothing.
 */
export async function extractAndStore(ctx: AuthedCtx, collection: string, raw: RawMemory, jobId: string | null): Promise<ExtractionOutcome> {
  const resolved = await resolveLlm(ctx.app, ctx.tenant.id);
  if (!resolved.llm && resolved.reason === 'spend_cap') {
    if (jobId) await finishJob(ctx.app.db, ctx.tenant.id, jobId, [], 'spend_cap');
    return { facts: [], skipped: 'spend_cap' };
  }
  const llm = resolved.llm;
  const facts = uniqueFacts(llm ? await llmFacts(ctx.app, llm, raw) : heuristicFacts(raw.text)).slice(0, MAX_FACTS);
  const embeddings = facts.length ? await ctx.app.embedder.embed(facts.map((f) => f.text)) : [];
  const neighbours: Neighbour[][] = [];
  for (const e of embeddings) neighbours.push(await nearestCurrentFacts(ctx, collection, raw.container_tag, e));
  // The facts of a held text are held with it, and confirm or replace nothing (docs/trust.md).
  const heldBecause = raw.quarantine?.state === 'held' ? raw.quarantine.reasons : undefined;
  const judged = llm ? await llmJudge(ctx.app, llm, facts, neighbours) : heuristicJudge(facts, neighbours);
  const decisions = heldBecause ? judged.map((): Decision => ({ relation: 'new', target: null })) : judged;

  return ctx.app.db.transaction(async (tx) => {
    const fresh = facts.map((f, i) => ({ f, i })).filter(({ i }) => decisions[i]!.relation !== 'duplicate');
    const items = fresh.map(({ f }): NewMemory => ({
      ...rawItem({ content: f.text, importance: raw.importance, container_tag: raw.container_tag, observed_at: iso(raw.observed_at)! }),
      category: f.type,
      metadata: { remembered_from: raw.id, ...(f.time_phrase ? { time_phrase: f.time_phrase } : {}) },
      valid_from: f.valid_from ?? undefined,
      valid_to: f.expires_at,
    }));
    const stored = await insertMemories(
      tx,
      ctx,
      collection,
      items,
      fresh.map(({ i }) => embeddings[i]!),
      { trust: raw.trust, heldBecause },
    );
    await confirmMemories(
      tx,
      ctx,
      collection,
      facts.flatMap((_, i) => (decisions[i]!.relation === 'duplicate' ? [decisions[i]!.target!] : [])),
    );
    const storedAt = new Map(fresh.map(({ i }, k) => [i, stored[k]!]));
    const outcomes: FactOutcome[] = [];
    for (const [i, f] of facts.entries()) {
      const d = decisions[i]!;
      const memory = storedAt.get(i);
      if (!memory) {
        outcomes.push({ id: d.target!, text: f.text, type: f.type, relation: 'duplicate', expires_at: f.expires_at });
      } else if (d.relation === 'supersedes' && !memory.quarantine && (await supersedeMemory(tx, ctx, collection, d.target!, memory.id))) {
        outcomes.push({ id: memory.id, text: f.text, type: f.type, relation: 'supersedes', supersedes_id: d.target!, expires_at: memory.valid_to });
      } else {
        outcomes.push({ id: memory.id, text: f.text, type: f.type, relation: 'new', expires_at: memory.valid_to });
      }
    }
    // The facts now carry the content, or it held none worth keeping (chatter, output, code): the
    // raw text stays, archived, as their source record, out of search.
    await archiveMemories(tx, ctx, collection, [raw.id]);
    if (jobId) await finishJob(tx, ctx.tenant.id, jobId, outcomes, null);
    return { facts: outcomes, skipped: null };
  });
}

/**
 * A fact remember met again confirms the memory that already says it instead of being stored
 * twice: its confirmations counted (memory_use) and its importance raised by CONFIRMATION_STEP up
 * to 1, pinned or not, so that importance follows repetition. Once per remember, however many of
 * its facts repeat the memory.
 */
async function confirmMemories(q: Queryable, ctx: AuthedCtx, collection: string, targets: string[]) {
  const ids = [...new Set(targets)];
  if (!ids.length) return;
  // One row a statement (rarely more than one): each is routed to its tenant's shard on Citus.
  for (const id of ids) {
    await q.query(
      `insert into memory_use (tenant_id, memory_id, confirmations, last_confirmed_at) values ($1, $2, 1, now())
       on conflict (tenant_id, memory_id) do update set confirmations = memory_use.confirmations + 1, last_confirmed_at = excluded.last_confirmed_at`,
      [ctx.tenant.id, id],
    );
  }
  const raised = await q.query(
    `update memories set importance = least(1, importance + $3), updated_at = now()
      where tenant_id = $1 and id = any($2::uuid[]) and importance < 1 returning id`,
    [ctx.tenant.id, ids, CONFIRMATION_STEP],
  );
  // A new importance changes rankings: cached results of the collection are of its old version.
  if (raised.length) await touchCollection(q, ctx.tenant.id, collection, 0);
}

/** The same fact twice in one text is one fact. */
function uniqueFacts(facts: ExtractedFact[]): ExtractedFact[] {
  const seen = new Set<string>();
  return facts
    .map((f) => ({ ...f, text: f.text.trim().slice(0, 10_000) }))
    .filter((f) => {
      const key = normalizeFact(f.text);
      if (!key || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

/**
 * Relative dates are resolved against when the text was written (its observed_at), not the time
 * of extraction: an old mail's "yesterday" is the day before it was sent (docs/llm-calls.md).
 * A `valid_from` or `expires_at` that is not a date, or a validity that ends before it starts,
 * loses only that bound: the fact itself is still worth keeping.
 */
async function llmFacts(app: App, llm: TenantLlm, raw: RawMemory): Promise<ExtractedFact[]> {
  const note = `The reference date (when the text was written) is ${iso(raw.observed_at)}.`;
  // Every extract_facts call goes through here: the `llm_extract` stage of the operator's metrics (its retry included).
  const reply = await app.metrics.time('llm_extract', () => llm.call(extractFacts, raw.text, { note }));
  const moment = (field: 'valid_from' | 'expires_at', value: string | null) => {
    const at = value === null ? NaN : Date.parse(value);
    if (value !== null && Number.isNaN(at)) app.log.warn({ call: extractFacts.name, [field]: value }, `LLM ${field} is not a date; kept the fact without it`);
    return Number.isNaN(at) ? null : new Date(at);
  };
  const kept = reply.facts.filter((f) => {
    const junk = junkReason(f.text);
    if (junk) app.log.warn({ call: extractFacts.name, fact: f.text.slice(0, 200), reason: junk }, 'LLM fact is not knowledge; dropped');
    return !junk;
  });
  return kept.map((f) => {
    const from = moment('valid_from', f.valid_from);
    const to = moment('expires_at', f.expires_at);
    const ordered = !to || !from || to > from;
    if (!ordered) app.log.warn({ call: extractFacts.name, expires_at: f.expires_at }, 'LLM expires_at is not after the fact starts; kept the fact without it');
    return { ...f, valid_from: iso(from), expires_at: ordered ? iso(to) : null, time_phrase: f.time_phrase?.slice(0, 200) || null };
  });
}

interface Neighbour {
  id: string;
  text: string;
  category: string;
  created_at: Date;
  similarity: number;
}

/**
 * The most similar current facts of the collection under the same container tag (another
 * end-user's facts neither repeat nor replace these). Ordered by the similarity expression rather
 * than the distance operator on purpose: that makes an exact scan of this collection, where the
 * global HNSW index filtered down to one tenant's collection could come back short.
 */
function nearestCurrentFacts(ctx: AuthedCtx, collection: string, containerTag: string | null, embedding: number[]) {
  return ctx.app.db.query<Neighbour>(
    `select id, text, category, created_at, (1 - (embedding <=> $3::vector))::float8 as similarity
       from memories
      where tenant_id = $1 and collection = $2 and category = any($4::text[]) and not archived
        and ${currentSql('memories')} and container_tag is not distinct from $6
      order by 1 - (embedding <=> $3::vector) desc, id
      limit $5`,
    [ctx.tenant.id, collection, toVectorLiteral(embedding), FACT_TYPES, NEIGHBOURS, containerTag],
  );
}

interface Decision {
  relation: Relation;
  target: string | null;
}

function heuristicJudge(facts: ExtractedFact[], neighbours: Neighbour[][]): Decision[] {
  return facts.map((f, i) => {
    const same = neighbours[i]!.find((n) => n.similarity >= DUPLICATE_SIMILARITY || normalizeFact(n.text) === normalizeFact(f.text));
    return same ? { relation: 'duplicate', target: same.id } : { relation: 'new', target: null };
  });
}

/**
 * One judge call for the facts that have neighbours; a fact with none is new without asking. A
 * decision about a fact that was not asked about is ignored, and an asked fact the reply leaves
 * out is new: the judge found nothing it repeats or replaces, which is what "new" means, and
 * asking again would risk failing the whole remember over it. A target that is not among the
 * fact's own similar facts makes the meaning unclear, so that reply is asked for again.
 */
async function llmJudge(app: App, llm: TenantLlm, facts: ExtractedFact[], neighbours: Neighbour[][]): Promise<Decision[]> {
  const decisions: Decision[] = facts.map(() => ({ relation: 'new', target: null }));
  const asked = facts.map((f, i) => ({ f, i })).filter(({ i }) => neighbours[i]!.length);
  if (!asked.length) return decisions;
  const message = {
    facts: asked.map(({ f, i }) => ({
      fact_index: i,
      text: f.text,
      type: f.type,
      similar: neighbours[i]!.map((n) => ({ id: n.id, text: n.text, type: n.category, stored_at: iso(n.created_at) })),
    })),
  };
  const isAsked = (index: number) => asked.some(({ i }) => i === index);
  const reply = await llm.call(judgeFacts, JSON.stringify(message), {
    check: (r) => {
      for (const d of r.decisions.filter((d) => isAsked(d.fact_index))) {
        if (d.relation !== 'new' && !neighbours[d.fact_index]!.some((n) => n.id === d.target_id)) {
          return `target_id ${d.target_id} of fact ${d.fact_index} is not one of its similar facts`;
        }
      }
      return null;
    },
  });
  const unasked = reply.decisions.filter((d) => !isAsked(d.fact_index)).map((d) => d.fact_index);
  if (unasked.length) app.log.warn({ call: judgeFacts.name, fact_indexes: unasked }, 'LLM judged facts it was not asked about; ignored');
  const answered = new Set<number>();
  for (const d of reply.decisions) {
    if (answered.has(d.fact_index) || !isAsked(d.fact_index)) continue;
    answered.add(d.fact_index);
    decisions[d.fact_index] = { relation: d.relation, target: d.relation === 'new' ? null : d.target_id };
  }
  return decisions;
}
