import { z } from 'zod';
import {
  categoryFrom,
  collectionFrom,
  contentId,
  isObject,
  kept,
  readRecord,
  recordError,
  sourceTime,
  type ImportFormat,
  type SourceRecord,
} from './format.ts';

const block = z.object({
  id: z.string().nullish(),
  label: z.string().min(1),
  value: z.string(),
  description: z.string().nullish(),
  limit: z.number().nullish(),
  read_only: z.boolean().nullish(),
});

const textPart = z.object({ type: z.string(), text: z.string().optional() });
const message = z.object({
  id: z.string().nullish(),
  role: z.string(),
  content: z.union([z.string(), z.array(textPart)]).nullish(),
  text: z.string().nullish(),
  name: z.string().nullish(),
  created_at: sourceTime,
});

const agentSchema = z.object({
  id: z.string().nullish(),
  name: z.string().nullish(),
  block_ids: z.array(z.string()).nullish(),
  core_memory: z.array(z.unknown()).nullish(),
  memory_blocks: z.array(z.unknown()).nullish(),
  messages: z.array(z.unknown()).nullish(),
  created_at: sourceTime.nullish(),
});
type Agent = z.output<typeof agentSchema>;

const messageText = (m: z.output<typeof message>) =>
  typeof m.content === 'string' ? m.content : (m.content ?? []).flatMap((p) => (p.type === 'text' && p.text ? [p.text] : [])).join('\n') || (m.text ?? '');

/** Only what the user and the agent said is kept: system prompts, tool calls and their returns are not memories. */
const SPOKEN = new Set(['user', 'assistant']);

function agentRecords(
  at: string,
  agent: Agent,
  blocks: Map<string, { at: string; raw: unknown }>,
  fileTime: string | undefined,
  withMessages: boolean,
): SourceRecord[] {
  const name = agent.name ?? agent.id ?? 'agent';
  const collection = collectionFrom(agent.name, 'letta');
  const observed = agent.created_at ?? fileTime;
  // The current agent file lists blocks once at its root and names them from each agent; older files hold them in the agent.
  const inAgent = (key: 'core_memory' | 'memory_blocks') => (agent[key] ?? []).map((raw, j) => ({ at: `${at}.${key}.${j}`, raw }));
  const missing: SourceRecord[] = [];
  const named = (agent.block_ids ?? []).flatMap((id, j) => {
    const found = blocks.get(id);
    if (!found) missing.push({ at: `${at}.block_ids.${j}`, error: `${at}.block_ids.${j}: names block "${id}", which the file does not hold` });
    return found ? [found] : [];
  });
  const blockRecords = [...inAgent('core_memory'), ...inAgent('memory_blocks'), ...named]
    .filter(({ raw }) => !(isObject(raw) && raw.value === ''))
    .map(({ at: where, raw }) =>
      readRecord(where, raw, block, (b) => ({
        sourceId: contentId(name, b.label, b.value),
        item: {
          text: b.value,
          category: categoryFrom(b.label, 'block'),
          metadata: { source_fields: kept({ kind: 'block', agent: name, label: b.label, description: b.description, limit: b.limit, read_only: b.read_only }) },
          collection,
          pinned: true,
          observed_at: observed,
        },
      })),
    );
  if (!withMessages) return [...blockRecords, ...missing];
  const messageRecords = (agent.messages ?? []).flatMap((raw, j) => {
    if (isObject(raw) && typeof raw.role === 'string' && !SPOKEN.has(raw.role)) return [];
    const record = readRecord(`${at}.messages.${j}`, raw, message, (m) => ({
      sourceId: contentId(name, m.id ?? '', m.created_at, messageText(m)),
      item: {
        text: messageText(m),
        category: 'message',
        metadata: { source_fields: kept({ kind: 'message', agent: name, role: m.role, name: m.name }) },
        collection,
        observed_at: m.created_at,
      },
    }));
    // A message of no text (an assistant turn that only called tools) is not a record.
    return 'item' in record && !record.item.text ? [] : [record];
  });
  return [...blockRecords, ...missing, ...messageRecords];
}

const isAgentFile = (data: unknown): data is Record<string, unknown> =>
  isObject(data) && (Array.isArray(data.agents) || Array.isArray(data.core_memory) || (Array.isArray(data.memory_blocks) && 'name' in data));

/**
 * Letta agent files (`.af`): the current shape (`{agents: [...], blocks: [...]}`, agents naming
 * their blocks by `block_ids`) or an older single agent (`core_memory` or `memory_blocks` in it).
 * Memory blocks become pinned memories, one collection per agent (its name); with
 * `include_messages` the user's and the agent's messages too. Block ids are local to the file,
 * so a block's source id is made from its agent, label and value.
 */
export const letta: ImportFormat = {
  name: 'letta',
  label: 'Letta agent file (`.af`)',
  detect: (data) => isAgentFile(data),
  parse: (data, options) => {
    if (!isAgentFile(data)) return 'a Letta agent file is {"agents": [...], "blocks": [...]}, or one agent with its "core_memory"';
    const fileTime = sourceTime.safeParse(data.created_at).data;
    const blocks = new Map<string, { at: string; raw: unknown }>();
    (Array.isArray(data.blocks) ? data.blocks : []).forEach((raw: unknown, i: number) => {
      if (isObject(raw) && typeof raw.id === 'string') blocks.set(raw.id, { at: `blocks.${i}`, raw });
    });
    const agents: Array<{ at: string; raw: unknown }> = Array.isArray(data.agents)
      ? data.agents.map((raw: unknown, i: number) => ({ at: `agents.${i}`, raw }))
      : [{ at: '(agent)', raw: data }];
    return agents.flatMap(({ at, raw }) => {
      const agent = agentSchema.safeParse(raw);
      if (!agent.success) return [recordError(at, agent.error)];
      return agentRecords(at, agent.data, blocks, fileTime, options.includeMessages);
    });
  },
};
