import { z } from 'zod';
import { atIndex, categoryFrom, collectionFrom, isObject, kept, listIn, readRecord, sourceId, sourceTime, type ImportFormat } from './format.ts';

/** One memory of a mem0 `get_all` answer (platform or open source). */
const mem0Memory = z.object({
  id: sourceId,
  memory: z.string(),
  user_id: z.string().nullish(),
  agent_id: z.string().nullish(),
  app_id: z.string().nullish(),
  run_id: z.string().nullish(),
  hash: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  categories: z.array(z.string()).nullish(),
  created_at: sourceTime.nullish(),
  updated_at: sourceTime.nullish(),
});

// supermemory's memory entries have `memory` too, with camelCase times.
const isMem0 = (v: unknown) => isObject(v) && typeof v.memory === 'string' && 'id' in v && !('createdAt' in v);

/**
 * mem0: a `get_all` dump, a list of memories or `{results: [...]}` (paged answers add `count`,
 * `next`). The agent (else the app) names the collection, the user is the container tag; the run
 * and the other ids are kept in metadata.
 */
export const mem0: ImportFormat = {
  name: 'mem0',
  label: 'mem0 (`get_all` output)',
  detect: (data) => {
    const list = listIn(data, ['results']);
    return !!list?.items.length && isMem0(list.items[0]);
  },
  parse: (data) => {
    const list = listIn(data, ['results']);
    if (!list) return 'a mem0 file is a list of memories or {"results": [...]}';
    return list.items.map((raw, i) =>
      readRecord(atIndex(list.key, i), raw, mem0Memory, (m) => ({
        sourceId: m.id,
        item: {
          text: m.memory,
          category: categoryFrom(m.categories?.[0], 'fact'),
          metadata: {
            ...m.metadata,
            source_fields: kept({
              user_id: m.user_id,
              agent_id: m.agent_id,
              app_id: m.app_id,
              run_id: m.run_id,
              categories: m.categories,
              hash: m.hash,
              updated_at: m.updated_at,
            }),
          },
          collection: collectionFrom(m.agent_id ?? m.app_id, 'mem0'),
          container_tag: m.user_id ?? m.run_id ?? null,
          observed_at: m.created_at ?? undefined,
        },
      })),
    );
  },
};
