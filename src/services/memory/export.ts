import type { AuthedCtx } from '../../core/context.ts';
import { Download } from '../../core/download.ts';
import { newId } from '../../core/ids.ts';
import { callerIds, collectionLimit, readableCollectionSql } from '../access/grants.ts';
import { listCollections } from './collections.ts';
import { pamHead, toPam } from './import-formats/pam.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from './memory-view.ts';

const PAGE = 500;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** A memory as exported: its text and attributes; no embedding, no files. */
const exportView = (r: MemoryRow) => {
  const { images: _files, ...memory } = memoryView(r);
  return memory;
};

/** The export's formats (docs/import.md): orgmem's own, or Portable AI Memory's `memory-store.json`. */
export const EXPORT_FORMATS = ['orgmem', 'pam'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * The account as one JSON document, written piece by piece while the memories are read in
 * id order, a page at a time: memory use stays flat however large the tenant is. Collections
 * the calling key may not read are left out, as in every other cross-collection read.
 */
export function exportAccount(ctx: AuthedCtx, format: ExportFormat = 'orgmem'): Download {
  const { tenant } = ctx;
  const exportedAt = new Date().toISOString();
  async function* head(): AsyncGenerator<string> {
    if (format === 'pam') {
      const root = JSON.stringify(pamHead(tenant.id, newId(), exportedAt));
      yield `${root.slice(0, -1)},"memories":[`;
      return;
    }
    const collections = (await listCollections(ctx)).map(({ name, description, metadata, created_at }) => ({ name, description, metadata, created_at }));
    yield `{"version":1,"exported_at":${JSON.stringify(exportedAt)},`;
    yield `"tenant":${JSON.stringify({ id: tenant.id, name: tenant.name, email: tenant.email, tier: tenant.tier, created_at: tenant.created_at })},`;
    yield `"collections":${JSON.stringify(collections)},"memories":[`;
  }
  const view = format === 'pam' ? (r: MemoryRow) => toPam(memoryView(r)) : exportView;
  async function* body(): AsyncGenerator<string> {
    yield* head();
    let after = FIRST_ID;
    let first = true;
    for (;;) {
      const rows = await ctx.app.db.query<MemoryRow>(
        `select ${MEMORY_COLUMNS} from memories m
          where m.tenant_id = $1 and m.id > $2 and ${readableCollectionSql('m.collection', '$1', '$3', '$4')}
          order by m.id limit ${PAGE}`,
        [tenant.id, after, callerIds(ctx), collectionLimit(ctx)],
      );
      if (rows.length) {
        yield (first ? '' : ',') + rows.map((r) => JSON.stringify(view(r))).join(',');
        first = false;
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    yield ']}';
  }
  const day = exportedAt.slice(0, 10);
  const name = format === 'pam' ? `memory-store-${day}.json` : `orgmem-export-${day}.json`;
  return new Download(name, 'application/json; charset=utf-8', body());
}
