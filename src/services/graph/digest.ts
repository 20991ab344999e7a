import type { AuthedCtx } from '../../core/context.ts';
import { notFound } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import { profile, summarize } from '../llm/calls.ts';
import { resolveLlm, type TenantLlm } from '../llm/tenant-llm.ts';
import { LIVE } from '../memory/memory-view.ts';
import { extractiveSummary } from './extractive.ts';

// Bounded input: no memory sends more than this many characters, and no call more than the total.
const MAX_CHARS_PER_MEMORY = 1_000;
const MAX_INPUT_CHARS = 24_000;
const PROFILE_MAX_FACTS = 200;

interface Digest<I, T> {
  kind: 'summary' | 'profile';
  /** What besides the collection version makes an answer reusable. */
  params: string;
  /** The memories to read, bounded; run only when no cached answer fits. */
  load: () => Promise<I[]>;
  llm: (llm: TenantLlm, items: I[]) => Promise<T>;
  fallback: (items: I[]) => T;
}

/**
 * Summary and profile answers are kept per collection version, so any write (which bumps the
 * version) invalidates them. The LLM is used when there is one; any failure of it falls back to
 * the extractive answer, which is then not cached, so the next call tries the LLM again.
 */
async function cachedDigest<I, T extends object>(ctx: AuthedCtx, collection: string, d: Digest<I, T>): Promise<T> {
  const [col] = await ctx.app.db.query<{ version: number }>('select version::int as version from collections where tenant_id = $1 and name = $2', [
    ctx.tenant.id,
    collection,
  ]);
  if (!col) throw notFound(`Collection "${collection}" not found`);
  const { llm } = await resolveLlm(ctx.app, ctx.tenant.id);
  const key = `${d.params}|${llm ? `${llm.source}:${llm.model}` : 'extractive'}`;
  const [hit] = await ctx.app.db.query<{ body: T }>(
    'select body from report_cache where tenant_id = $1 and collection = $2 and kind = $3 and version = $4 and cache_key = $5',
    [ctx.tenant.id, collection, d.kind, col.version, key],
  );
  if (hit) return hit.body;
  const items = await d.load();
  let body: T;
  let cacheable = true;
  if (llm && items.length) {
    try {
      body = await d.llm(llm, items);
    } catch (err) {
      ctx.app.log.warn({ err, report: d.kind }, 'LLM report failed; answering the extractive one');
      body = d.fallback(items);
      cacheable = false;
    }
  } else body = d.fallback(items);
  if (cacheable) {
    await ctx.app.db.query(
      `insert into report_cache (tenant_id, collection, kind, cache_key, version, body) values ($1, $2, $3, $4, $5, $6::jsonb)
       on conflict (tenant_id, collection, kind) do update set cache_key = excluded.cache_key, version = excluded.version, body = excluded.body`,
      [ctx.tenant.id, collection, d.kind, key, col.version, body],
    );
  }
  return body;
}

const clip = (text: string) => (text.length > MAX_CHARS_PER_MEMORY ? `${text.slice(0, MAX_CHARS_PER_MEMORY)}...` : text);

/** Keeps items, in order, while their clipped texts fit in the input budget. */
function withinBudget<T extends { text: string }>(items: T[]): T[] {
  let used = 0;
  return items.filter((m) => (used += clip(m.text).length) <= MAX_INPUT_CHARS);
}

export function collectionSummary(ctx: AuthedCtx, collection: string, limit: number) {
  const stamp = (r: { summary: string; themes: string[] }, basedOn: number) => ({ ...r, based_on: basedOn, generated_at: iso(new Date())! });
  return cachedDigest(ctx, collection, {
    kind: 'summary',
    params: `limit=${limit}`,
    load: async () =>
      withinBudget(
        await ctx.app.db.query<{ text: string }>(
          `select text from memories where tenant_id = $1 and collection = $2 and ${LIVE} order by created_at desc, id desc limit $3`,
          [ctx.tenant.id, collection, limit],
        ),
      ),
    llm: async (llm, read) => stamp(await llm.call(summarize, read.map((m, i) => `${i + 1}. ${clip(m.text)}`).join('\n')), read.length),
    fallback: (read) => stamp(extractiveSummary(read.map((m) => m.text)), read.length),
  });
}

export function collectionProfile(ctx: AuthedCtx, collection: string) {
  return cachedDigest(ctx, collection, {
    kind: 'profile',
    params: '',
    load: async () =>
      withinBudget(
        await ctx.app.db.query<{ text: string; category: string; created_at: Date }>(
          `select text, category, created_at from memories
            where tenant_id = $1 and collection = $2 and category in ('fact', 'preference') and ${LIVE}
            order by created_at desc, id desc limit $3`,
          [ctx.tenant.id, collection, PROFILE_MAX_FACTS],
        ),
      ),
    llm: async (llm, read) => {
      const facts = read.map((f) => ({ type: f.category, text: clip(f.text), stored_at: iso(f.created_at) }));
      return { profile: (await llm.call(profile, JSON.stringify({ facts }))).profile, based_on: read.length };
    },
    fallback: (read) => {
      const section = (title: string, category: string) => {
        const lines = read.filter((f) => f.category === category).map((f) => `- ${clip(f.text)}`);
        return lines.length ? [title, ...lines].join('\n') : null;
      };
      return { profile: [section('Preferences:', 'preference'), section('Facts:', 'fact')].filter(Boolean).join('\n\n'), based_on: read.length };
    },
  });
}
