import type { AuthedCtx } from '../../core/context.ts';
import { Download } from '../../core/download.ts';
import { collectionLimit, readableCollectionSql } from '../access/grants.ts';
import { listCollections } from './collections.ts';
import { MEMORY_COLUMNS, memoryView, type MemoryRow } from './memory-view.ts';

const PAGE = 500;
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** A memory as exported: its text and attributes; no embedding, no files. */
const exportView = (r: MemoryRow) => {
  const { images: _files, ...memory } = memoryView(r);
  return memory;
};

/**
 * The account as one JSON document, written piece by piece while the memories are read in
 * id order, a page at a time: memory use stays flat however large the tenant is. Collections
 * the calling key may not read are left out, as in every other cross-collection read.
 */
export function exportAccount(ctx: AuthedCtx): Download {
  const { tenant } = ctx;
  async function* body(): AsyncGenerator<string> {
    const collections = (await listCollections(ctx)).map(({ name, description, metadata, created_at }) => ({ name, description, metadata, created_at }));
    yield `{"version":1,"exported_at":${JSON.stringify(new Date().toISOString())},`;
    yield `"tenant":${JSON.stringify({ id: tenant.id, name: tenant.name, email: tenant.email, tier: tenant.tier, created_at: tenant.created_at })},`;
    yield `"collections":${JSON.stringify(collections)},"memories":[`;
    let after = FIRST_ID;
    let first = true;
    for (;;) {
      const rows = await ctx.app.db.query<MemoryRow>(
        `select ${MEMORY_COLUMNS} from memories m
          where m.tenant_id = $1 and m.id > $2 and ${readableCollectionSql('m.collection', '$1', '$3', '$4')}
          order by m.id limit ${PAGE}`,
        [tenant.id, after, ctx.agent.id, collectionLimit(ctx)],
      );
      if (rows.length) {
        yield (first ? '' : ',') + rows.map((r) => JSON.stringify(exportView(r))).join(',');
        first = false;
      }
      if (rows.length < PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    yield ']}';
  }
  const day = new Date().toISOString().slice(0, 10);
  return new Download(`orgmem-export-${day}.json`, 'application/json; charset=utf-8', body());
}
