import { createHash } from 'node:crypto';
/**
 * Files of the other stores' shapes, as their public API references describe them, with made-up
 * contents: each has good records, one malformed and one partial, as real dumps do.
 */

/** mem0's `get_all`: `{results: [...]}`; the third names no user, only a run. */
export const mem0Dump = () => ({
  results: [
    {
      id: '6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e01',
      memory: 'Prefers aisle seats on long flights',
      hash: 'a1',
      metadata: { confidence: 'high' },
      categories: ['travel', 'preferences'],
      user_id: 'alice',
      agent_id: 'travel-bot',
      app_id: null,
      run_id: null,
      created_at: '2024-03-05T09:15:00.123456-08:00',
      updated_at: '2024-04-01T10:00:00-08:00',
    },
    {
      id: '6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e02',
      memory: 'Is allergic to peanuts',
      hash: 'a2',
      metadata: null,
      categories: ['health'],
      user_id: 'alice',
      agent_id: null,
      app_id: 'concierge app',
      run_id: null,
      created_at: '2023-11-20T18:00:00',
      updated_at: '2023-11-20T18:00:00',
    },
    {
      id: '6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e03',
      memory: 'The itinerary for the Lisbon trip was confirmed',
      user_id: null,
      agent_id: null,
      run_id: 'run-42',
      created_at: '2024-06-01T12:00:00Z',
      updated_at: '2024-06-01T12:00:00Z',
    },
    // malformed: the memory is no text
    { id: '6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e04', memory: 42, user_id: 'bob', created_at: '2024-01-01T00:00:00Z' },
    // partial: cut before its time was written
    { id: '6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e05', memory: 'Works from Porto', user_id: 'bob', created_at: 'not yet' },
  ],
});

/** supermemory's documents list (`POST /v3/documents/list`): documents under `memories`. */
export const supermemoryList = () => ({
  memories: [
    {
      id: 'doc_01HZX1',
      customId: 'meeting-2024-02-12',
      connectionId: null,
      title: 'Q1 planning notes',
      summary: 'The team agreed to ship the importer first.',
      content: 'Q1 planning: ship the importer first, then the proxy. Owner: Dana.',
      status: 'done',
      type: 'text',
      containerTags: ['user_dana', 'project_memory'],
      metadata: { source: 'notes-app' },
      createdAt: '2024-02-12T14:30:00.000Z',
      updatedAt: '2024-02-13T08:00:00.000Z',
    },
    {
      id: 'doc_01HZX2',
      customId: null,
      title: 'Bookmark: pgvector docs',
      summary: null,
      content: null,
      status: 'done',
      type: 'webpage',
      url: 'https://example.com/pgvector',
      containerTags: ['user_dana'],
      metadata: {},
      createdAt: '2024-02-20T09:00:00.000Z',
      updatedAt: '2024-02-20T09:00:00.000Z',
    },
    // partial: no content, summary or title (a document still being processed)
    { id: 'doc_01HZX3', status: 'queued', containerTags: ['user_dana'], createdAt: '2024-02-21T09:00:00.000Z' },
  ],
  pagination: { currentPage: 1, limit: 10, totalItems: 3, totalPages: 1 },
});

/** supermemory's web app export: documents with the memory entries extracted from them. */
export const supermemoryExport = () => ({
  documents: [
    {
      id: 'doc_02AB',
      title: 'Chat with Sam',
      content: 'Sam said he moved to Berlin in May and now works at a bakery.',
      containerTags: ['user_sam'],
      createdAt: '2024-05-10T10:00:00.000Z',
      updatedAt: '2024-05-10T10:00:00.000Z',
      memoryEntries: [
        { id: 'mem_02AB_1', memory: 'Sam lives in Berlin', createdAt: '2024-05-10T10:01:00.000Z', isLatest: true, isForgotten: false },
        { id: 'mem_02AB_2', memory: 'Sam lives in Hamburg', createdAt: '2023-01-10T10:00:00.000Z', isLatest: false, isForgotten: true },
        { id: 'mem_02AB_3', memory: 'Sam has a bakery shift this week', createdAt: '2024-05-10T10:02:00.000Z', forgetAfter: '2024-05-17T00:00:00.000Z' },
        // malformed: no memory text
        { id: 'mem_02AB_4', createdAt: '2024-05-10T10:03:00.000Z' },
      ],
    },
  ],
});

/** Letta's agent file (`.af`): blocks at the root, named by each agent; messages of every role. */
export const lettaAgentFile = () => ({
  agents: [
    {
      id: 'agent-0',
      name: 'support agent',
      system: 'You are a helpful support agent.',
      agent_type: 'memgpt_v2_agent',
      // block-9 is not in the file (a file edited by hand)
      block_ids: ['block-0', 'block-1', 'block-2', 'block-3', 'block-9'],
      tool_ids: ['tool-0'],
      in_context_message_ids: ['message-0', 'message-1'],
      messages: [
        { id: 'message-0', role: 'system', content: [{ type: 'text', text: 'You are a helpful support agent.' }], created_at: '2025-01-05T09:00:00Z' },
        { id: 'message-1', role: 'user', content: [{ type: 'text', text: 'My printer shows error E42.' }], created_at: '2025-01-05T09:01:00Z' },
        {
          id: 'message-2',
          role: 'assistant',
          content: [],
          tool_calls: [{ id: 'call-1', type: 'function', function: { name: 'search_docs', arguments: '{}' } }],
          created_at: '2025-01-05T09:01:05Z',
        },
        {
          id: 'message-3',
          role: 'tool',
          content: [{ type: 'text', text: '{"result": "E42: paper jam"}' }],
          tool_call_id: 'call-1',
          created_at: '2025-01-05T09:01:06Z',
        },
        {
          id: 'message-4',
          role: 'assistant',
          content: [{ type: 'text', text: 'E42 is a paper jam: open the rear tray.' }],
          created_at: '2025-01-05T09:01:10Z',
        },
        // partial: cut before its time
        { id: 'message-5', role: 'user', content: 'Thanks!' },
      ],
    },
  ],
  blocks: [
    { id: 'block-0', label: 'human', value: 'Name: Priya. Owns a small print shop.', limit: 5000, description: 'What the agent knows about the user' },
    { id: 'block-1', label: 'persona', value: 'I am a patient support agent.', limit: 5000 },
    { id: 'block-2', label: 'scratch', value: '', limit: 5000 },
    // malformed: the block lost its value
    { id: 'block-3', label: 'notes', limit: 5000 },
  ],
  tools: [{ id: 'tool-0', name: 'search_docs' }],
  groups: [],
  files: [],
  sources: [],
  mcp_servers: [],
  metadata: {},
  created_at: '2025-01-06T00:00:00Z',
});

/** An older agent file: one agent at the root with its core memory. */
export const lettaLegacyAgent = () => ({
  name: 'old-agent',
  agent_type: 'memgpt_agent',
  core_memory: [
    { label: 'human', value: 'The user is called Ken.', limit: 2000 },
    { label: 'persona', value: 'I am Sam, a friendly assistant.', limit: 2000 },
  ],
  messages: [],
  created_at: '2024-09-01T08:00:00Z',
});

/** Zep: a user's threads with their messages and the user's graph edges (facts). */
export const zepExport = () => ({
  user_id: 'user-kendra',
  threads: [
    {
      thread_id: 'thread-1',
      messages: [
        {
          uuid: 'a7e2c9a0-0000-4000-8000-000000000001',
          role: 'user',
          name: 'Kendra',
          content: 'I love my Adidas running shoes.',
          created_at: '2024-08-01T10:00:00Z',
          processed: true,
        },
        {
          uuid: 'a7e2c9a0-0000-4000-8000-000000000002',
          role: 'assistant',
          content: 'Good to hear! How far do you run?',
          created_at: '2024-08-01T10:00:05Z',
          metadata: { model: 'x' },
        },
        // malformed: no time
        { uuid: 'a7e2c9a0-0000-4000-8000-000000000003', role: 'user', content: 'About 10k a week.' },
      ],
    },
  ],
  edges: [
    {
      uuid: 'e1000000-0000-4000-8000-000000000001',
      name: 'LOVES',
      fact: 'Kendra loves Adidas shoes',
      source_node_uuid: 'n1',
      target_node_uuid: 'n2',
      created_at: '2024-08-01T10:00:10Z',
      valid_at: '2024-08-01T10:00:00Z',
      invalid_at: '2024-09-15T00:00:00Z',
      expired_at: '2024-09-15T12:00:00Z',
      episodes: ['ep1'],
    },
    {
      uuid: 'e1000000-0000-4000-8000-000000000002',
      name: 'PREFERS',
      fact: 'Kendra prefers Puma shoes',
      source_node_uuid: 'n1',
      target_node_uuid: 'n3',
      created_at: '2024-09-15T12:00:00Z',
      valid_at: '2024-09-15T00:00:00Z',
      invalid_at: null,
      expired_at: null,
    },
    // partial: the fact's text is missing
    { uuid: 'e1000000-0000-4000-8000-000000000003', name: 'OWNS', created_at: '2024-09-16T00:00:00Z' },
  ],
});

/** A Zep thread's message listing as its API answers it, with nothing around it. */
export const zepMessageListing = () => ({
  messages: [
    {
      uuid: 'b7e2c9a0-0000-4000-8000-000000000001',
      role: 'user',
      role_type: 'user',
      content: 'Book a table for two on Friday.',
      created_at: '2024-10-01T18:00:00Z',
    },
    {
      uuid: 'b7e2c9a0-0000-4000-8000-000000000002',
      role: 'assistant',
      role_type: 'assistant',
      content: 'Done: Friday 8pm, two people.',
      created_at: '2024-10-01T18:00:09Z',
    },
  ],
  row_count: 2,
  total_count: 2,
});

/** A Portable AI Memory v1.0 memory store. */
export const pamStore = () => ({
  schema: 'portable-ai-memory',
  schema_version: '1.0',
  export_id: '3b0e8c1e-8a0d-4c43-9a6e-6f5e0e1d2c3b',
  exported_by: 'some-tool/2.1.0',
  export_date: '2025-03-01T00:00:00Z',
  owner: { id: 'owner-77' },
  memories: [
    {
      id: 'm-1',
      type: 'skill',
      custom_type: null,
      status: 'active',
      content: 'Writes Rust and TypeScript daily',
      content_hash: pamHash('Writes Rust and TypeScript daily'),
      tags: ['programming'],
      confidence: { initial: 0.9, current: 0.85, decay_model: 'time_linear', last_reinforced: null },
      temporal: { created_at: '2024-02-02T08:00:00Z', updated_at: '2024-12-01T00:00:00Z', valid_from: '2020-01-01T00:00:00Z', valid_until: null },
      provenance: { platform: 'chatgpt', extraction_method: 'llm_inference' },
      metadata: { language: 'en', domain: 'technical' },
    },
    {
      id: 'm-2',
      type: 'custom',
      custom_type: 'dietary_rule',
      status: 'archived',
      content: 'Vegetarian on weekdays',
      temporal: { created_at: '2023-05-05T12:00:00Z', valid_until: '2024-01-01T00:00:00Z' },
      provenance: { platform: 'claude' },
    },
    // partial: its temporal block is missing
    { id: 'm-3', type: 'goal', content: 'Run a marathon', provenance: { platform: 'gemini' } },
    // changed after it was hashed: its integrity check fails
    {
      id: 'm-4',
      type: 'preference',
      content: 'Prefers window seats',
      content_hash: pamHash('Prefers aisle seats'),
      temporal: { created_at: '2024-06-01T00:00:00Z' },
    },
  ],
  relations: [
    { id: 'r-1', from: 'm-1', to: 'm-2', type: 'related_to', confidence: 0.7, created_at: '2024-03-01T00:00:00Z' },
    // names a memory the file does not hold
    { id: 'r-2', from: 'm-2', to: 'm-99', type: 'supports' },
  ],
});

/** PAM's content hash as its specification words it: the text trimmed, lowercased, NFC, runs of spaces made one, SHA-256. */
function pamHash(text: string): string {
  const normal = text.trim().toLowerCase().normalize('NFC').replace(/ +/g, ' ');
  return `sha256:${createHash('sha256').update(normal).digest('hex')}`;
}

/** A Zep user's graph as its API lists it: nodes (entities with summaries) and an edge between two. */
export const zepGraph = () => ({
  user_id: 'user-kendra',
  nodes: [
    {
      uuid: 'n1',
      name: 'Kendra',
      labels: ['Entity', 'Person'],
      summary: 'Kendra runs about 10k a week and prefers Puma shoes.',
      attributes: { city: 'Austin' },
      created_at: '2024-08-01T10:00:10Z',
    },
    { uuid: 'n2', name: 'Puma', labels: ['Entity', 'Organization'], summary: '', created_at: '2024-09-15T00:00:00Z' },
    // malformed: no name
    { uuid: 'n3', labels: ['Entity'], summary: 'An orphan', created_at: '2024-09-15T00:00:00Z' },
  ],
  edges: [
    {
      uuid: 'e9',
      name: 'PREFERS',
      fact: 'Kendra prefers Puma shoes',
      source_node_uuid: 'n1',
      target_node_uuid: 'n2',
      created_at: '2024-09-15T00:00:10Z',
      valid_at: '2024-09-15T00:00:00Z',
    },
  ],
});
