import { z } from 'zod';
import type { AuthedCtx } from '../../core/context.ts';
import { collectionName, metadataObject } from '../../schemas/fields.ts';
import { memoryCreate } from '../../schemas/memory.ts';
import type { Grants } from '../access/grants.ts';
import { insertMemories, type NewMemory } from './memories.ts';

/** One memory of an import: a create body plus where it goes and its flags (as exported). */
const importItem = memoryCreate.extend({
  collection: collectionName.optional(),
  pinned: z.boolean().default(false),
  archived: z.boolean().default(false),
  expires_at: z.iso.datetime({ offset: true }).nullable().default(null),
});
const importCollection = z.object({
  name: collectionName,
  description: z.string().max(2000).nullable().optional(),
  metadata: metadataObject.optional(),
});

export const DEFAULT_IMPORT_COLLECTION = 'default';
const BATCH = 100;
const MAX_REPORTED = 100;

interface Report {
  imported: number;
  skipped: number;
  collections: string[];
  errors: Array<{ index: number; detail: string }>;
}

const issueText = (e: z.ZodError) => e.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`).join('; ');

type ImportInput = { memories: unknown[]; collections?: unknown[]; into_collection?: string };

/**
 * Every collection an import may write, the rule admin.import declares (each is checked for write
 * before the import starts): into_collection, or the items' collections (the default one for an
 * item naming none) and the listed ones. An item whose collection is not a valid name is skipped
 * for it, so it names none here.
 */
export function importTargets(input: ImportInput): string[] {
  if (input.into_collection) return [input.into_collection];
  const named = (raw: unknown) => (typeof raw === 'object' && raw !== null ? (raw as { collection?: unknown }).collection : undefined);
  const items = input.memories.flatMap((raw) => {
    const collection = named(raw);
    return collection === undefined ? [DEFAULT_IMPORT_COLLECTION] : (collectionName.safeParse(collection).data ?? []);
  });
  const listed = (input.collections ?? []).flatMap((raw) => importCollection.safeParse(raw).data?.name ?? []);
  return [...new Set([...items, ...listed])];
}

/**
 * Imports memories (new ids, texts re-embedded) in batches of 100, each batch its own
 * transaction, so no transaction waits on the embedder. Every item is validated on its own:
 * a bad item, an item of a collection the key may not write (`grants`, resolved from
 * `importTargets`), or a batch that cannot be stored is skipped and counted, and the rest goes
 * on. A listed collection the key may not write is not created.
 */
export async function importAccount(ctx: AuthedCtx, input: ImportInput, grants: Grants): Promise<Report> {
  const report: Report = { imported: 0, skipped: 0, collections: [], errors: [] };
  const skip = (index: number, detail: string) => {
    report.skipped++;
    if (report.errors.length < MAX_REPORTED) report.errors.push({ index, detail });
  };
  const touched = new Set<string>();

  // Listed collections are created with their description and metadata (existing ones are
  // left as they are). With into_collection everything lands in that one collection.
  if (!input.into_collection) {
    for (const raw of input.collections ?? []) {
      const c = importCollection.safeParse(raw);
      if (!c.success || !grants.allows(c.data.name)) continue;
      await ctx.app.db.query(
        'insert into collections (tenant_id, name, description, metadata) values ($1, $2, $3, $4::jsonb) on conflict (tenant_id, name) do nothing',
        [ctx.tenant.id, c.data.name, c.data.description ?? null, c.data.metadata ?? {}],
      );
      touched.add(c.data.name);
    }
  }

  const valid: Array<{ index: number; collection: string; item: NewMemory }> = [];
  for (const [index, raw] of input.memories.entries()) {
    const parsed = importItem.safeParse(raw);
    if (!parsed.success) {
      skip(index, issueText(parsed.error));
      continue;
    }
    const { collection, ...item } = parsed.data;
    const target = input.into_collection ?? collection ?? DEFAULT_IMPORT_COLLECTION;
    if (!grants.allows(target)) skip(index, `this API key may not write collection "${target}"`);
    else valid.push({ index, collection: target, item });
  }

  for (let start = 0; start < valid.length; start += BATCH) {
    const batch = valid.slice(start, start + BATCH);
    try {
      const embeddings = await ctx.app.embedder.embed(batch.map((b) => b.item.text));
      await ctx.app.db.transaction(async (tx) => {
        for (const name of new Set(batch.map((b) => b.collection))) {
          const group = batch.flatMap((b, i) => (b.collection === name ? [{ item: b.item, embedding: embeddings[i]! }] : []));
          await insertMemories(
            tx,
            ctx,
            name,
            group.map((g) => g.item),
            group.map((g) => g.embedding),
          );
        }
      });
      report.imported += batch.length;
      for (const b of batch) touched.add(b.collection);
    } catch (err) {
      ctx.app.log.error({ err, requestId: ctx.requestId }, 'import batch failed');
      for (const b of batch) skip(b.index, `could not be stored (request ${ctx.requestId})`);
    }
  }
  report.collections = [...touched].sort();
  return report;
}
