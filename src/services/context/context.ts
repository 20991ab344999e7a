import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { AuthedCtx } from '../../core/context.ts';
import { RECALLED_PREAMBLE, recalledBlock } from '../../core/recalled.ts';
import { fromVectorLiteral } from '../../ports/db/db.ts';
import type { ContextInput, ContextResponse } from '../../schemas/context.ts';
import type { ProxyMessage } from '../../schemas/proxy.ts';
import { searchFields, searchQuery } from '../../schemas/search.ts';
import type { TrustClass } from '../../schemas/trust.ts';
import { currentSql, validAtSql } from '../memory/memory-view.ts';
import { handOver } from '../ledger/handover.ts';
import { resolveScope, search } from '../search/search.ts';
import { mmrOrder } from './mmr.ts';
import { repeatCheck, type RepeatCheck } from './repeats.ts';
import { countTokens, ENCODING } from './tokens.ts';

/** Search results the per-query part is chosen from: search's largest page. */
const POOL = 50;
const searchInput = z.object(searchFields);
/** Facts, preferences and pinned memories read for the stable part, pinned first, then the newest. */
const STABLE_READ = 200;
/** The stable part takes at most this share of the budget, so that a large profile leaves room for the query. */
const STABLE_SHARE = 0.5;

const STABLE_HEADING = 'Profile: facts, preferences and pinned memories.';
const QUERY_HEADING = 'Recalled for this conversation, most relevant first.';

interface Item {
  id: string;
  collection: string;
  category: string;
  text: string;
  trust: TrustClass;
  flagged: boolean;
}
interface StableRow extends Item {
  pinned: boolean;
  created_at: Date;
}
export interface QueryItem extends Item {
  score: number;
}

/**
 * A memory as the block shows it: its collection, text and trust class (the model weighs a
 * mail's or an agent's words below a person's), and whether its text was flagged as trying to
 * instruct an agent (docs/trust.md); nothing a model has no use for.
 */
const shown = (items: Item[]) =>
  recalledBlock(items.map(({ collection, text, trust, flagged }) => ({ collection, text, trust, ...(flagged ? { flagged: true } : {}) })));
const section = (heading: string, items: Item[]) => `${heading}\n${shown(items)}`;

/** The text of the last user message (its text parts, for one in parts); empty when there is none. */
export function latestUserText(messages: ProxyMessage[]): string {
  const content = [...messages].reverse().find((m) => m.role === 'user')?.content;
  if (typeof content === 'string') return content.trim();
  const texts = (content ?? []).flatMap((p) => (p.type === 'text' && typeof p.text === 'string' ? [p.text] : []));
  return texts.join('\n').trim();
}

/**
 * The context block for a prompt (docs/context.md): a stable part (profile facts, preferences and
 * pinned memories, hashed) then a per-query part (hybrid search, MMR, packed), the whole rendered
 * text within `max_tokens`. `collection` null reads every collection the caller may read (a
 * named one must exist: 404); grants were checked by invoke.
 */
export async function buildContext(ctx: AuthedCtx, input: ContextInput, collection: string | null): Promise<ContextResponse> {
  const query = contextQuery(input);
  // The search resolves the scope itself, so it does not wait for this one: both round trips overlap.
  const [stableRows, found] = await Promise.all([
    resolveScope(ctx, collection).then(({ collections }) => readStable(ctx, collections, input)),
    query ? recall(ctx, query, input, collection) : [],
  ]);
  // One read of the embeddings of both parts' candidates: MMR orders by them, and no part takes a
  // memory that says what one already taken says (docs/context.md, "No repeats").
  const vectors = await readVectors(ctx, [...stableReach(stableRows, input.max_tokens), ...found]);
  const repeats = repeatCheck(vectors);
  const stable = packStable(stableRows, input.max_tokens, repeats);
  const pool = withoutStable(found, stable);
  const order = mmrOrder(withVectors(pool, vectors), input.mmr_lambda).map((i) => pool[i]!);
  const picked = packQuery(stable, order, input, repeats);
  // What the block hands on is recalled; the search's other candidates are not (docs/search.md, "Recall counts").
  const handed = [...stable.kept, ...picked.kept].map((m) => m.id);
  handOver(ctx, handed);
  return answer(stable, picked, found.length);
}

/** The query: the one given, or the latest user message's text; cut to search's longest. */
export const contextQuery = (input: ContextInput) => (input.query ?? latestUserText(input.messages ?? [])).slice(0, searchQuery.maxLength!);

type Stable = ReturnType<typeof packStable>;
type Picked = ReturnType<typeof packQuery>;

/** The search candidates the stable part does not hold already. */
export function withoutStable(found: QueryItem[], stable: Stable): QueryItem[] {
  const taken = new Set(stable.kept.map((m) => m.id));
  return found.filter((m) => !taken.has(m.id));
}

/**
 * The per-query part: the candidates in MMR order packed after the stable part (or the preamble),
 * within the budget, without one that repeats a memory of either part.
 */
export function packQuery(stable: Stable, order: QueryItem[], input: ContextInput, repeats: RepeatCheck) {
  const head = `${stable.text || RECALLED_PREAMBLE}\n\n`;
  const admits = (item: QueryItem, kept: QueryItem[]) => !repeats(item, stable.kept) && !repeats(item, kept);
  return pack(order, input.max_tokens, (kept) => head + section(QUERY_HEADING, kept), admits, input.limit);
}

function answer(stable: Stable, picked: Picked, candidates: number): ContextResponse {
  const context = picked.kept.length ? picked.text : stable.text;
  return {
    context,
    tokens: picked.kept.length ? picked.tokens : stable.tokens,
    encoding: ENCODING,
    stable: {
      text: stable.text,
      version: createHash('sha256').update(stable.text).digest('hex').slice(0, 16),
      memories: stable.kept.map(({ id, collection, category, text, trust, pinned }) => ({ id, collection, category, text, trust, pinned })),
    },
    query: {
      text: context.slice(stable.text.length),
      memories: picked.kept.map(({ id, collection, category, text, trust, score }) => ({ id, collection, category, text, trust, score })),
      candidates,
    },
  };
}

/**
 * The stable part's candidates: current ones, or those valid at `as_of` (the same rules as search,
 * docs/time.md). Read collection by collection, each in the order of its listing index (tenant,
 * collection, pinned, created_at), so a read stops after its first rows where one query over
 * `collection = any(...)` sorted every fact and preference of the tenant (bench/README.md,
 * "Context endpoint").
 */
export async function readStable(ctx: AuthedCtx, collections: string[], input: ContextInput): Promise<StableRow[]> {
  if (!collections.length) return [];
  const valid = input.as_of === null ? currentSql('memories') : validAtSql('memories', '$6');
  return ctx.app.db.query<StableRow>(
    `select s.* from unnest($2::text[]) as c(name) cross join lateral (
        select id, collection, category, text, trust, coalesce(quarantine->>'state' = 'flagged', false) as flagged, pinned, created_at from memories
         where tenant_id = $1 and collection = c.name and not archived and ${valid} and (pinned or category in ('fact', 'preference'))
           and ($3::text is null or container_tag = $3) and ($5::text[] is null or trust = any($5::text[]))
         order by pinned desc, created_at desc, id desc limit $4) as s
      order by pinned desc, created_at desc, id desc limit $4`,
    [ctx.tenant.id, collections, input.container_tag, STABLE_READ, input.trust, ...(input.as_of === null ? [] : [input.as_of])],
  );
}

/**
 * The stable rows whose embeddings are read: in priority order, as far as their costs add up to
 * twice the stable part's budget. Packing drops repeats, so it may reach past what fits at once,
 * but rarely past that; a row beyond it is compared by its words only. Reading every row's
 * embedding (up to 200) would cost a session start tens of ms for rows that cannot fit.
 */
export function stableReach(rows: StableRow[], maxTokens: number): StableRow[] {
  const budget = Math.floor(maxTokens * STABLE_SHARE);
  const reached: StableRow[] = [];
  let total = 0;
  for (const row of rows) {
    const cost = costOf(row);
    // One that can never fit is skipped by packing, and needs no embedding.
    if (cost > budget) continue;
    total += cost;
    if (total > 2 * budget) break;
    reached.push(row);
  }
  return reached;
}

/**
 * The stable part, within its share of `maxTokens`: kept by priority (pinned, then the newest),
 * shown oldest first, so that a new fact changes the end of the block and a prompt cache keeps
 * the rest; of memories that say the same thing, the first by priority. Empty when nothing fits.
 */
export function packStable(rows: StableRow[], maxTokens: number, repeats: RepeatCheck) {
  const budget = Math.floor(maxTokens * STABLE_SHARE);
  const byAge = (a: StableRow, b: StableRow) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id);
  const admits = (item: StableRow, kept: StableRow[]) => !repeats(item, kept);
  const packed = pack(rows, budget, (kept) => `${RECALLED_PREAMBLE}\n\n${section(STABLE_HEADING, [...kept].sort(byAge))}`, admits);
  const kept = [...packed.kept].sort(byAge);
  return kept.length ? { kept, text: packed.text, tokens: packed.tokens } : { kept, text: '', tokens: 0 };
}

/** The search candidates for the query, with the caller's container tag; a named collection's absence was answered by resolveScope. */
export async function recall(ctx: AuthedCtx, query: string, input: ContextInput, collection: string | null): Promise<QueryItem[]> {
  const request = searchInput.parse({ query, limit: POOL, container_tag: input.container_tag, as_of: input.as_of, trust: input.trust });
  const { results } = await search(ctx, request, { collection, nameCollections: true, candidates: true });
  return results.map((r) => ({ id: r.id, collection: r.collection!, category: r.category, text: r.text, trust: r.trust, flagged: r.flagged, score: r.score }));
}

/**
 * The embeddings of the memories, by id, in one statement; none read when there are fewer than
 * two memories, since there is then nothing to order or to compare.
 */
export async function readVectors(ctx: AuthedCtx, memories: Item[]): Promise<Map<string, number[]>> {
  if (memories.length < 2) return new Map();
  const rows = await ctx.app.db.query<{ id: string; embedding: string }>(
    'select id, embedding::text as embedding from memories where tenant_id = $1 and id = any($2::uuid[])',
    [ctx.tenant.id, [...new Set(memories.map((m) => m.id))]],
  );
  return new Map(rows.map((r) => [r.id, fromVectorLiteral(r.embedding)]));
}

/** The candidates as MMR takes them: search score and embedding. */
export const withVectors = (pool: QueryItem[], vectors: Map<string, number[]>) => pool.map((m) => ({ score: m.score, vector: vectors.get(m.id) ?? null }));

/**
 * Greedy packing by the rendered text: items in priority order, each that `admits` (not a repeat
 * of one kept) taken while the estimate (the frame's tokens plus each item's own) stays within the
 * budget, at most `max`; then the whole text is counted and the last items dropped until it fits,
 * since tokens at the seams of joined texts need not add up.
 */
function pack<T extends Item>(items: T[], budget: number, render: (kept: T[]) => string, admits: (item: T, kept: T[]) => boolean, max = Infinity) {
  const frame = countTokens(render([]));
  const kept: T[] = [];
  let estimate = frame;
  for (const item of items) {
    if (kept.length >= max) break;
    const cost = costOf(item);
    if (estimate + cost > budget || !admits(item, kept)) continue;
    kept.push(item);
    estimate += cost;
  }
  let text = render(kept);
  let tokens = countTokens(text);
  while (kept.length && tokens > budget) {
    kept.pop();
    text = render(kept);
    tokens = countTokens(text);
  }
  return { kept, text, tokens };
}
const EMPTY_BLOCK = countTokens(shown([]));
/** A memory's own tokens in a block, counted once per item of a request (the stable reach and packing both ask). */
const costs = new WeakMap<Item, number>();
function costOf(item: Item): number {
  let cost = costs.get(item);
  if (cost === undefined) {
    cost = countTokens(shown([item])) - EMPTY_BLOCK + 1;
    costs.set(item, cost);
  }
  return cost;
}
