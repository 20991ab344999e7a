import type { App, AuthedCtx } from '../../core/context.ts';
import { endStep, type Queryable } from '../../ports/db/db.ts';
import type { JobMeta } from '../../ports/jobs/jobs.ts';
import { resolveGrants } from '../access/grants.ts';
import { importJob, MAX_REPORTED, type ImportError } from './import.ts';
import { insertMemories, type NewMemory } from './memories.ts';

/** Records embedded and stored per step, each step one transaction with the import's counts. */
const STEP = 100;
/** How long one job stores steps before it queues the next and gives its worker back (docs/architecture.md, "Jobs"). */
const SLICE_MS = 20_000;

interface Progress {
  processed: number;
  errors: number;
  state: string;
  completed_at: Date | null;
}

interface StagedRow {
  position: number;
  source_index: number;
  collection: string;
  source_key: string | null;
  item: NewMemory;
}

/**
 * One try of an import's job (docs/import.md): the staged records stored STEP at a time from the
 * import's `processed` on, each step in one transaction with the counts it moves. So a try cut
 * short (a killed process, a database error) leaves whole steps behind, and the next try (the
 * queue's, or the one a restart runs) goes on at the first record not stored: nothing stored
 * twice, nothing lost. A step commits only while `processed` is where this try read it: two tries
 * at once (a retry queued while one runs) store each step once, and the one that loses stops.
 *
 * Each step resolves the grants of the key that sent the import for the collections it writes, as
 * they are now: a record of a collection the key may no longer write is skipped with the reason. A
 * record an earlier import stored (its `import_source`) is counted `already_imported`. A step that
 * fails (the embedder down) is retried by the queue with its backoff; after the last try the
 * import fails with the reason, its records left pending for the same request to resume.
 */
export async function runImport(ctx: AuthedCtx, importId: string, { attempt, maxAttempts }: JobMeta): Promise<void> {
  const { app } = ctx;
  const tenantId = ctx.tenant.id;
  const [start] = await app.db.query<Progress>(
    `update imports set state = 'running', updated_at = now() where tenant_id = $1 and id = $2 and state in ('queued', 'running')
     returning processed, jsonb_array_length(errors) as errors, state, completed_at`,
    [tenantId, importId],
  );
  if (!start) return;
  let processed = start.processed;
  const started = Date.now();
  try {
    for (;;) {
      if (Date.now() - started > SLICE_MS) {
        await app.jobs.enqueue(app.platform, importJob, { tenant_id: tenantId, import_id: importId }, { key: `import:${importId}` });
        return;
      }
      const stepStarted = performance.now();
      const step = await app.db.query<StagedRow>(
        `select position, source_index, collection, source_key, item from import_records
          where tenant_id = $1 and import_id = $2 and position >= $3 order by position limit $4`,
        [tenantId, importId, processed, STEP],
      );
      if (!step.length) break;
      const moved = await storeStep(ctx, importId, processed, step);
      if (!moved) return;
      processed += step.length;
      await endStep(app.db, stepStarted);
    }
    await app.db.transaction(async (tx) => {
      await tx.query(
        `update imports set state = 'done', completed_at = now(), updated_at = now(), error = null,
                collections = (select coalesce(jsonb_agg(distinct c order by c), '[]'::jsonb) from jsonb_array_elements_text(collections || listed) c)
          where tenant_id = $1 and id = $2 and state = 'running'`,
        [tenantId, importId],
      );
      await tx.query('delete from import_records where tenant_id = $1 and import_id = $2', [tenantId, importId]);
    });
  } catch (err) {
    const final = attempt >= maxAttempts;
    app.log.warn({ err, import_id: importId, attempt, final }, 'an import step failed');
    const reason = `Storing stopped at its record ${processed + 1} of the valid ones (try ${attempt} of ${maxAttempts}): ${reasonOf(err)}`;
    if (!final) {
      await app.db.query(`update imports set state = 'queued', error = $3, updated_at = now() where tenant_id = $1 and id = $2 and state = 'running'`, [
        tenantId,
        importId,
        reason,
      ]);
      throw err;
    }
    await failImport(app, tenantId, importId, `${reason}. Send the same request with the same Idempotency-Key to resume it there`);
  }
}

/**
 * One step: its records of collections the key may write, less those stored before, embedded,
 * then stored in one transaction with the counts, if `processed` is still `from`. False when
 * another try moved it first (this one stops).
 */
async function storeStep(ctx: AuthedCtx, importId: string, from: number, step: StagedRow[]): Promise<boolean> {
  const { app } = ctx;
  const names = [...new Set(step.map((r) => r.collection))];
  const grants = await resolveGrants(ctx, { collections: () => names, permission: 'write', partial: true }, {}, false);
  const refused = step.filter((r) => !grants.allows(r.collection));
  const writable = step.filter((r) => grants.allows(r.collection));
  // Records stored before (by an earlier import of the same file) are neither embedded nor stored again.
  const before = await storedSources(app.db, ctx.tenant.id, writable);
  const fresh = writable.filter((r) => !r.source_key || !before.has(r.source_key));
  const vectors = fresh.length
    ? await app.embedder.embed(fresh.map((r) => r.item.text)).catch((err: unknown) => {
        throw new EmbedderFailed(`the embedder failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      })
    : [];
  return app.db.transaction(async (tx) => {
    // Two imports of the same file at once: the second waits here, then finds the first's memories.
    if (app.db.kind === 'postgres' && fresh.some((r) => r.source_key))
      await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`import:${ctx.tenant.id}`]);
    const now = await storedSources(tx, ctx.tenant.id, fresh);
    const store = fresh.flatMap((r, i) => (r.source_key && now.has(r.source_key) ? [] : [{ ...r, embedding: vectors[i]! }]));
    const storedNames = [...new Set(store.map((r) => r.collection))];
    const errors: ImportError[] = refused.map((r) => ({ index: r.source_index, detail: `this API key may not write collection "${r.collection}"` }));
    // First, so that a second try of this import waits here and stops, before it inserts anything.
    const [moved] = await tx.query(
      `update imports set processed = processed + $4, imported = imported + $5, already_imported = already_imported + $6,
              skipped = skipped + $7,
              errors = errors || (select coalesce(jsonb_agg(e), '[]'::jsonb) from (select e from jsonb_array_elements($8::jsonb) e limit greatest(0, $9 - jsonb_array_length(imports.errors))) x),
              collections = (select coalesce(jsonb_agg(distinct c order by c), '[]'::jsonb) from jsonb_array_elements_text(collections || $10::jsonb) c),
              updated_at = now()
        where tenant_id = $1 and id = $2 and processed = $3 and state = 'running' returning id`,
      [ctx.tenant.id, importId, from, step.length, store.length, writable.length - store.length, refused.length, errors, MAX_REPORTED, storedNames],
    );
    if (!moved) return false;
    for (const name of storedNames) {
      const group = store.filter((r) => r.collection === name);
      await insertMemories(
        tx,
        ctx,
        name,
        group.map((g) => g.item),
        group.map((g) => g.embedding),
        { trust: 'import' },
      );
    }
    return true;
  });
}

/** The source keys of `records` that a memory of the tenant already holds (`metadata.import_source`). */
async function storedSources(q: Queryable, tenantId: string, records: Array<{ source_key: string | null }>): Promise<Set<string>> {
  const keys = records.flatMap((r) => (r.source_key ? [r.source_key] : []));
  if (!keys.length) return new Set();
  const rows = await q.query<{ key: string }>(
    `select metadata->>'import_source' as key from memories where tenant_id = $1 and metadata ? 'import_source' and metadata->>'import_source' = any($2::text[])`,
    [tenantId, keys],
  );
  return new Set(rows.map((r) => r.key));
}

/** Fails an import not settled yet, with the reason the tenant reads in its status; its records stay for a resume. */
async function failImport(app: App, tenantId: string, importId: string, reason: string): Promise<void> {
  await app.db.query(
    `update imports set state = 'failed', error = $3, updated_at = now() where tenant_id = $1 and id = $2 and state in ('queued', 'running')`,
    [tenantId, importId, reason],
  );
}

/**
 * An import given up without a try that settled it (its last try cut short by a crash, or the key
 * that sent it revoked or no longer an agent of the tenant): failed, with the reason.
 */
export const abandonImport = (app: App, tenantId: string, importId: string, reason: string) =>
  failImport(app, tenantId, importId, `${reason}. Send the same request with the same Idempotency-Key to resume it`);

/** A step whose embeddings could not be computed: the tenant reads why (its own endpoint may be the cause). */
class EmbedderFailed extends Error {}

/** What the tenant reads: the embedder's failure, or an internal error (the details are in the server's log). */
const reasonOf = (err: unknown) => (err instanceof EmbedderFailed ? err.message : 'an internal error (the server log has the details)');
