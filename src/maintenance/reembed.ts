import type { Logger } from 'pino';
import type { Db } from '../ports/db/db.ts';
import { toVectorLiteral } from '../ports/db/db.ts';
import type { Embedder } from '../ports/embedder/embedder.ts';
import { VECTOR_INDEX } from '../ports/db/vector-storage.ts';
import { createIndexSql, currentStorage, retypeColumn } from './vector-storage.ts';

const BATCH = 256;

/**
 * Switches the database to the configured embedder: the embedding column takes the new
 * dimension and every memory is embedded again. One transaction, so a failure leaves the
 * database as it was. Texts are embedded batch by batch inside it; this is an offline
 * maintenance command (the service is stopped), so holding the transaction is acceptable.
 */
export async function reembed(db: Db, embedder: Embedder, log: Logger): Promise<{ from: number; to: number; memories: number }> {
  const [recorded] = await db.query<{ value: number }>(`select value from settings where key = 'embedding_dim'`);
  const from = Number(recorded?.value);
  const to = embedder.dimensions;
  let memories = 0;
  const onShards = await db.transaction(async (tx) => {
    // The column and its index come back as they were: the same type, kept in the row (sql/007;
    // a new column takes its type's own storage), the same storage, graph and predicate at the
    // new dimension (a binary graph's codes are as long as the vectors).
    const { column, storage, graph, partial } = await currentStorage(tx);
    await tx.exec(`drop index if exists ${VECTOR_INDEX}`);
    await tx.exec(`alter table memories drop column embedding`);
    const keepOnShards = await retypeColumn(tx, `add column embedding ${column}(${to})`);
    let lastTenant = '00000000-0000-0000-0000-000000000000';
    let lastId = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = await tx.query<{ tenant_id: string; id: string; text: string }>(
        `select tenant_id, id, text from memories where (tenant_id, id) > ($1::uuid, $2::uuid) order by tenant_id, id limit ${BATCH}`,
        [lastTenant, lastId],
      );
      if (!rows.length) break;
      const vectors = await embedder.embed(rows.map((r) => r.text));
      await tx.query(
        `update memories m set embedding = v.e::vector
           from unnest($1::uuid[], $2::uuid[], $3::text[]) as v(tenant_id, id, e)
          where m.tenant_id = v.tenant_id and m.id = v.id`,
        [rows.map((r) => r.tenant_id), rows.map((r) => r.id), vectors.map(toVectorLiteral)],
      );
      memories += rows.length;
      ({ tenant_id: lastTenant, id: lastId } = rows[rows.length - 1]!);
      log.info(`re-embedded ${memories} memories`);
    }
    await tx.exec(`alter table memories alter column embedding set not null`);
    if (storage && graph) await tx.exec(createIndexSql({ storage, ...graph }, to, partial));
    await tx.query(`insert into settings (key, value) values ('embedding_dim', $1::jsonb) on conflict (key) do update set value = excluded.value`, [to]);
    return keepOnShards;
  });
  await onShards(db);
  return { from, to, memories };
}
