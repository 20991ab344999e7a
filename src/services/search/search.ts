import type { AuthedCtx } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import { toVectorLiteral } from '../../ports/db/db.ts';
import { VECTOR_INDEX } from '../../ports/db/vector-storage.ts';
import type { SearchInput, SearchResponse, SearchResult } from '../../schemas/search.ts';
import { callerIds, collectionLimit, readableCollectionSql } from '../access/grants.ts';
import { provenanceOf } from '../memory/provenance.ts';
import { answerKey, embedQuery, getAnswer, markBroad, putAnswer } from './cache.ts';
import { loadRows, vectorCandidates, type CandidateRow } from './candidates.ts';
import { exactBound, readsExactly } from './exact-cost.ts';
import { feedbackVector, type SearchVector } from './feedback.ts';
import { reciprocalRankFusion } from './fusion.ts';
import { rerankCandidates, rewriteSearchQuery } from './llm-steps.ts';
import { loadNeighbours, type Neighbour } from './neighbours.ts';
import { handOver } from '../ledger/handover.ts';
import { scanExact } from './scan.ts';
import type { Filters, Scope } from './scope.ts';
import { expandQuery, lexemeWeights, lexemesSql, queryLexemes, rankMatches, rankText, secondPassRanking, type TextRanking } from './text.ts';
import { withWordForms } from './word-forms.ts';

/**
 * Candidates fetched from each side before fusion: twice the limit, at least 20. Deeper lists
 * let a memory ranked in the twenties on both sides into a small page, but cost in proportion
 * where the HNSW graph walks under a filter: with at least 40, LoCoMo hybrid recall@5 / @10 at
 * limit 10 was 58.3 / 68.0 against 58.2 / 67.7, while the 2% filter's p95 at 1M was 43 ms
 * against 33 (docs/search.md).
 */
export const candidateCount = (limit: number) => Math.max(20, 2 * limit);

interface ResolvedScope extends Scope {
  /** [collection, version] pairs: the part of the cache key that changes with every write. */
  versions: Array<[string, string]>;
  /** The lexemes of `lexemesOf`, when given (text.ts). */
  lexemes: string[];
}

/**
 * The collections a search reads with their versions. One collection: it must exist (404),
 * grants were checked by invoke. All collections: those the caller's key may read. With
 * `lexemesOf`, the same statement also answers that text's lexemes (one round trip less).
 */
export async function resolveScope(ctx: AuthedCtx, collection: string | null, lexemesOf?: string): Promise<ResolvedScope> {
  const params: unknown[] = [ctx.tenant.id, collection ?? callerIds(ctx)];
  const limit = collection === null ? `$${params.push(collectionLimit(ctx))}` : '';
  const lexemes = lexemesOf === undefined ? '' : `, ${lexemesSql(`$${params.push(lexemesOf)}`)} as lexemes`;
  // The table's and the graph's sizes for the cost models (text.ts, exact-cost.ts): the planner's
  // estimates, -1 before the first ANALYZE; the graph's is null while the tenant is not in it.
  const sizes = `(select reltuples::float8 from pg_class where oid = 'memories'::regclass) as table_rows,
    (select coalesce((select reltuples::float8 from pg_class where oid = to_regclass('${VECTOR_INDEX}')), 0)
       from graph_tenants g where g.tenant_id = $1 and g.state = 'ready') as graph_rows`;
  const columns = `name, version::text as version, memory_count::int as memory_count, ${sizes}${lexemes}`;
  type Row = { name: string; version: string; memory_count: number; table_rows: number | null; graph_rows: number | null; lexemes?: string[] };
  const rows = await ctx.app.db.query<Row>(
    collection !== null
      ? `select ${columns} from collections where tenant_id = $1 and name = $2`
      : `select ${columns} from collections c where tenant_id = $1 and ${readableCollectionSql('c.name', '$1', '$2', limit)} order by name`,
    params,
  );
  if (collection !== null && !rows.length) throw notFound(`Collection "${collection}" not found`);
  return {
    tenantId: ctx.tenant.id,
    collections: rows.map((r) => r.name),
    memoryCount: rows.reduce((n, r) => n + r.memory_count, 0),
    tableRows: Math.max(0, Number(rows[0]?.table_rows ?? 0)),
    graphRows: rows[0]?.graph_rows == null ? null : Math.max(0, Number(rows[0].graph_rows)),
    versions: rows.map((r) => [r.name, r.version]),
    lexemes: rows[0]?.lexemes ?? [],
  };
}

/** A memory's fields as search answers them, without the search's own (score, collection). */
function shown(row: CandidateRow) {
  return {
    id: row.id,
    text: row.text,
    category: row.category,
    importance: row.importance,
    source: row.source,
    metadata: row.metadata,
    images: row.images.map(({ key: _key, ...img }) => ({ ...img, url: null })) as SearchResult['images'],
    created_at: iso(row.created_at)!,
    observed_at: iso(row.observed_at)!,
    valid_from: iso(row.valid_from)!,
    valid_to: iso(row.valid_to),
    provenance: provenanceOf(row),
    trust: row.trust,
    flagged: row.quarantine?.state === 'flagged',
  };
}

/** Shapes a candidate as a search result; `collection` only on all-collection search, `neighbours` only when asked for. */
export function toResult(row: CandidateRow, withCollection: boolean, neighbours?: Neighbour[]): SearchResult {
  return {
    ...shown(row),
    score: row.score,
    ...(withCollection ? { collection: row.collection } : {}),
    ...(neighbours ? { neighbours: neighbours.map((n) => ({ ...shown(n), offset: n.offset })) } : {}),
  };
}

/** Milliseconds until the earliest end of validity still ahead among the candidates, after which the answer may change. */
export function expiryTtl(rows: CandidateRow[]): number | undefined {
  const now = Date.now();
  const times = rows
    .filter((r) => r.valid_to)
    .map((r) => new Date(r.valid_to!).getTime() - now)
    .filter((t) => t > 0);
  return times.length ? Math.min(...times) : undefined;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const ms = (since: number) => round2(performance.now() - since);

/**
 * Candidates from each side, filters inside both. Hybrid feeds the three best matches of an
 * exhaustive first full-text pass back into both sides (feedback.ts, text.ts). A scope or filter
 * small enough to read whole is read once per pass for both sides (hybridExact). Otherwise,
 * where the first pass may have to sample (more memories in scope than the match cap), the plain
 * vector search starts alongside it, so the common case costs the slower side, not both in turn;
 * it is replaced by the feedback search if the pass turns out exhaustive after all.
 */
async function retrieve(ctx: AuthedCtx, scope: Scope, input: SearchInput, weights: Map<string, number>, queryVector: ArrayLike<number> | undefined) {
  const { app } = ctx;
  const k = candidateCount(input.limit);
  const filters: Filters = input;
  const literal = queryVector && toVectorLiteral(queryVector);
  const nearest = async (vector: SearchVector) =>
    (await vectorCandidates(app, scope, filters, vector, k, { scoreAgainst: vector.feedbackIds?.length ? literal : undefined })).filter(
      (r) => r.score >= input.min_score,
    );
  const best = async (ranking: TextRanking) => (await loadRows(app.db, scope, [ranking.ranked.slice(0, k)]))[0]!;
  if (input.mode === 'vector') return { vectorRows: await nearest({ literal: literal! }), textRows: [] };
  if (input.mode === 'hybrid' && readsExactly(app, scope, filters, k, 'hybrid')) {
    const both = await hybridExact(ctx, scope, input, weights, literal!);
    if (both) return both;
  }

  const plain = input.mode === 'hybrid' && scope.memoryCount > app.config.search.textRankCap ? nearest({ literal: literal! }) : undefined;
  plain?.catch(() => {}); // awaited below, or superseded: never an unhandled rejection
  const firstPass = await rankText(app, scope, filters, weights, k);
  if (input.mode === 'text') return { vectorRows: [], textRows: await best(firstPass) };

  const expanded = expandQuery(weights, firstPass);
  if (!expanded) return { vectorRows: await (plain ?? nearest({ literal: literal! })), textRows: await best(firstPass) };
  const [vectorRows, textRows] = await Promise.all([
    nearest(feedbackVector(literal!, firstPass.ranked)),
    rankText(app, scope, filters, expanded, k).then((second) => best(secondPassRanking(firstPass.ranked, second, expanded, scope))),
  ]);
  return { vectorRows, textRows };
}

/**
 * Hybrid search of a scope or filter small enough to read whole: each pass reads its memories
 * once and ranks both sides from that read (scan.ts), the feedback pass included, then one
 * statement loads the rows kept. Null when the filters select more memories than the exact bound
 * after all.
 */
async function hybridExact(ctx: AuthedCtx, scope: Scope, input: SearchInput, weights: Map<string, number>, literal: string) {
  const { app } = ctx;
  const filters: Filters = input;
  const k = candidateCount(input.limit);
  // Every row in scope is read: ranking up to the cap costs little more than the sample would.
  const limit = app.config.search.textRankCap;
  const pass = (vector: SearchVector, weights: Map<string, number>) =>
    scanExact(app.db, scope, filters, {
      vector,
      scoreAgainst: vector.feedbackIds?.length ? literal : undefined,
      k,
      lexemes: [...weights.keys()],
      limit,
      bound: exactBound(app, scope, k, 'hybrid'),
    });
  const first = await pass({ literal }, weights);
  if (first.broad) {
    markBroad(app, scope, filters);
    return null;
  }
  let { nearest } = first;
  let ranking = rankMatches(first.matches, weights, scope, limit);
  const expanded = expandQuery(weights, ranking);
  if (expanded) {
    const second = await pass(feedbackVector(literal, ranking.ranked), expanded);
    nearest = second.nearest;
    ranking = secondPassRanking(first.matches, rankMatches(second.matches, expanded, scope, limit), expanded, scope);
  }
  const [vectorRows, textRows] = await loadRows(app.db, scope, [nearest.filter((r) => r.score >= input.min_score), ranking.ranked.slice(0, k)]);
  return { vectorRows: vectorRows!, textRows: textRows! };
}

/** The candidates in the order the LLM gave them; as they were when there is no usable answer. */
async function reranked(ctx: AuthedCtx, query: string, candidates: CandidateRow[]): Promise<CandidateRow[]> {
  const order = await rerankCandidates(ctx.app, ctx.tenant.id, query, candidates);
  if (!order) return candidates;
  const byId = new Map(candidates.map((c) => [c.id, c]));
  return order.map((id) => byId.get(id)!);
}

/**
 * The search pipeline: scope -> cache -> (rewrite) -> embed -> candidates from each side with the
 * filters inside (retrieve) -> reciprocal-rank fusion -> (rerank) -> cut to `limit` -> cache.
 * `collection` null searches every collection the caller may read; `nameCollections` puts each
 * result's collection in it (the all-collection endpoint, even when narrowed to one). The results
 * are handed over (ledger/handover.ts: the ledger entry and the recall counts) unless they are `candidates` a caller chooses from and
 * counts itself (the context endpoint).
 */
export async function search(
  ctx: AuthedCtx,
  input: SearchInput,
  target: { collection: string | null; nameCollections: boolean; candidates?: boolean },
): Promise<SearchResponse> {
  const { collection, nameCollections } = target;
  const recalled = (results: SearchResult[]) => {
    const ids = results.map((r) => r.id);
    if (!target.candidates) handOver(ctx, ids);
    return results;
  };
  const started = performance.now();
  // The lexemes come with the scope unless the query is to be rewritten first (or not matched on).
  const plainLexemes = input.mode !== 'vector' && !input.rewrite;
  const scope = await resolveScope(ctx, collection, plainLexemes ? input.query : undefined);
  const key = answerKey({ tenantId: ctx.tenant.id, kind: nameCollections ? 'search-all' : 'search', scope: scope.versions, request: input });
  const hit = getAnswer(ctx.app, key);
  if (hit) return { results: recalled(hit.results), query_embedding_ms: 0, search_ms: ms(started), cached: true };

  const query = (input.rewrite && (await rewriteSearchQuery(ctx.app, ctx.tenant.id, input.query))) || input.query;
  let embeddingMs = 0;
  let queryVector: ArrayLike<number> | undefined;
  if (input.mode !== 'text') {
    const embedded = await embedQuery(ctx.app, query);
    embeddingMs = embedded.ms;
    queryVector = embedded.vector;
  }
  // The `search` stage of the operator's metrics: retrieval itself, without the cache, embedding or LLM steps.
  const { vectorRows, textRows } = scope.collections.length
    ? await ctx.app.metrics.time('search', async () => {
        const weights =
          input.mode === 'vector' ? new Map<string, number>() : plainLexemes ? lexemeWeights(scope.lexemes) : await queryLexemes(ctx.app.db, query);
        return retrieve(ctx, scope, input, input.mode === 'hybrid' ? await withWordForms(ctx.app, scope, weights) : weights, queryVector);
      })
    : { vectorRows: [], textRows: [] };
  const ranked = input.mode === 'hybrid' ? reciprocalRankFusion([vectorRows, textRows]) : input.mode === 'vector' ? vectorRows : textRows;
  const final = (input.rerank ? await reranked(ctx, query, ranked) : ranked).slice(0, input.limit);
  const neighbours =
    input.neighbours > 0
      ? await loadNeighbours(ctx.app.db, scope, { as_of: input.as_of, include_archived: input.include_archived }, final, input.neighbours)
      : undefined;
  const results = final.map((r) => toResult(r, nameCollections, neighbours?.get(r.id)));
  const around = neighbours ? [...neighbours.values()].flat() : [];
  putAnswer(ctx.app, key, { results }, expiryTtl([...vectorRows, ...textRows, ...around]));
  return {
    results: recalled(results),
    query_embedding_ms: round2(embeddingMs),
    search_ms: round2(Math.max(0, performance.now() - started - embeddingMs)),
    cached: false,
  };
}
