import { z } from 'zod';
import { isObject, kept, listIn, readRecord, sourceId, sourceTime, type ImportFormat, type SourceRecord } from './format.ts';

const COLLECTION = 'zep';
const metadata = z.record(z.string(), z.unknown()).nullish();

/** A message of a thread's (a session's, before threads) message list. */
const message = z.object({
  uuid: sourceId,
  role: z.string().nullish(),
  role_type: z.string().nullish(),
  name: z.string().nullish(),
  content: z.string(),
  created_at: sourceTime,
  metadata,
});

/** A fact: an edge of the user's graph, or an item of the older facts list. */
const fact = z.object({
  uuid: sourceId,
  fact: z.string(),
  name: z.string().nullish(),
  created_at: sourceTime,
  valid_at: sourceTime.nullish(),
  invalid_at: sourceTime.nullish(),
  expired_at: sourceTime.nullish(),
  source_node_name: z.string().nullish(),
  target_node_name: z.string().nullish(),
});

/** A node of the user's graph: an entity Zep extracted, with its summary. */
const node = z.object({
  uuid: sourceId,
  name: z.string().min(1),
  summary: z.string().nullish(),
  labels: z.array(z.string()).nullish(),
  attributes: z.record(z.string(), z.unknown()).nullish(),
  created_at: sourceTime,
});

const text = z.string().nullish();
/** A thread's messages with the ids the listing itself does not repeat. */
const threadScope = z.object({ thread_id: text, session_id: text, uuid: text, user_id: text });

type Scope = { user_id?: string | null; thread_id?: string | null };

const messageRecord = (at: string, raw: unknown, scope: Scope): SourceRecord =>
  readRecord(at, raw, message, (m) => ({
    sourceId: m.uuid,
    item: {
      text: m.content,
      category: 'message',
      metadata: {
        ...m.metadata,
        source_fields: kept({ kind: 'message', role: m.role ?? m.role_type, name: m.name, thread_id: scope.thread_id, user_id: scope.user_id }),
      },
      collection: COLLECTION,
      container_tag: scope.user_id ?? null,
      observed_at: m.created_at,
    },
  }));

const factRecord = (at: string, raw: unknown, scope: Scope): SourceRecord =>
  readRecord(at, raw, fact, (f) => ({
    sourceId: f.uuid,
    item: {
      text: f.fact,
      category: 'fact',
      metadata: {
        source_fields: kept({
          kind: 'fact',
          name: f.name,
          source: f.source_node_name,
          target: f.target_node_name,
          user_id: scope.user_id,
          expired_at: f.expired_at,
        }),
      },
      collection: COLLECTION,
      container_tag: scope.user_id ?? null,
      observed_at: f.created_at,
      valid_from: f.valid_at ?? undefined,
      valid_to: f.invalid_at ?? undefined,
      // Zep expired it: a later fact replaced it.
      archived: !!f.expired_at,
    },
  }));

/** An entity becomes one memory: its name and what Zep knows of it (its summary), a fact about it. */
const nodeRecord = (at: string, raw: unknown, scope: Scope): SourceRecord =>
  readRecord(at, raw, node, (n) => ({
    sourceId: n.uuid,
    item: {
      text: n.summary?.trim() ? `${n.name}: ${n.summary.trim()}` : n.name,
      category: 'entity',
      metadata: {
        source_fields: kept({
          kind: 'node',
          name: n.name,
          labels: n.labels?.filter((l) => l !== 'Entity'),
          attributes: n.attributes,
          user_id: scope.user_id,
        }),
      },
      collection: COLLECTION,
      container_tag: scope.user_id ?? null,
      observed_at: n.created_at,
    },
  }));

const LISTS = ['messages', 'threads', 'facts', 'edges', 'nodes'];
/** What a record of a bare list is: a fact has `fact`, a message `content`, a node neither but a name. */
const recordOf = (raw: unknown) =>
  isObject(raw) && 'fact' in raw ? factRecord : isObject(raw) && !('content' in raw) && 'name' in raw ? nodeRecord : messageRecord;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const scopeOf = (v: unknown): Scope => {
  const s = threadScope.safeParse(v).data;
  return { user_id: s?.user_id, thread_id: s?.thread_id ?? s?.session_id ?? s?.uuid };
};

/**
 * Zep: a thread's messages (`{messages: [...]}`, with `thread_id` and `user_id` beside them when
 * added), a user's facts (`{facts: [...]}` or graph edges, `{edges: [...]}` or a list), or both
 * gathered as `{user_id, threads: [{thread_id, messages}], facts|edges: [...], nodes: [...]}`, a
 * graph's nodes (entities) too. The user is the container tag; a fact's `valid_at` and
 * `invalid_at` are its validity.
 */
export const zep: ImportFormat = {
  name: 'zep',
  label: 'Zep (thread messages, facts, graph edges)',
  detect: (data) => {
    if (isObject(data) && ['threads', 'facts', 'edges', 'nodes'].some((key) => Array.isArray(data[key]))) return true;
    const first = listIn(data, ['messages'])?.items[0];
    return isObject(first) && 'uuid' in first && ('fact' in first || 'role' in first || 'role_type' in first);
  },
  parse: (data) => {
    if (Array.isArray(data)) return data.map((raw, i) => recordOf(raw)(String(i), raw, {}));
    if (!isObject(data) || !LISTS.some((key) => Array.isArray(data[key])))
      return 'a Zep file is {"messages": [...]}, {"facts": [...]}, {"edges": [...]}, {"nodes": [...]} or {"threads": [...]}';
    const scope = scopeOf(data);
    return [
      ...list(data.messages).map((raw, i) => messageRecord(`messages.${i}`, raw, scope)),
      ...list(data.threads).flatMap((thread, t) => {
        const own = scopeOf(thread);
        const inThread = { user_id: own.user_id ?? scope.user_id, thread_id: own.thread_id };
        return list(isObject(thread) ? thread.messages : undefined).map((raw, i) => messageRecord(`threads.${t}.messages.${i}`, raw, inThread));
      }),
      ...(['facts', 'edges'] as const).flatMap((key) => list(data[key]).map((raw, i) => factRecord(`${key}.${i}`, raw, { user_id: scope.user_id }))),
      ...list(data.nodes).map((raw, i) => nodeRecord(`nodes.${i}`, raw, { user_id: scope.user_id })),
    ];
  },
};
