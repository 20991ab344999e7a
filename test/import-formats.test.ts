import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Tenant } from './support/client.ts';
import {
  lettaAgentFile,
  lettaLegacyAgent,
  mem0Dump,
  pamStore,
  supermemoryExport,
  supermemoryList,
  zepExport,
  zepGraph,
  zepMessageListing,
} from './support/import-samples.ts';
import { IMPORT, importAndWait } from './support/imports.ts';
import { startServer, type TestServer } from './support/server.ts';
import { trpcClient } from './support/transports.ts';
import { until } from './support/until.ts';
import { IMPORT_FORMATS, ORGMEM_FORMAT } from '../src/services/memory/import-formats/index.ts';

interface Stored {
  text: string;
  collection: string;
  container_tag: string | null;
  category: string;
  source: string;
  pinned: boolean;
  archived: boolean;
  observed_at: string;
  valid_from: string;
  valid_to: string | null;
  metadata: Record<string, any>;
  embedded: boolean;
}

it("docs/import.md's table has a row for each format of the registry, and no other", () => {
  const page = readFileSync(new URL('../docs/import.md', import.meta.url), 'utf8');
  const table = page.split('## What each format becomes')[1]!.split('\n\n')[1]!;
  const rows = table.split('\n').slice(2);
  expect(rows.map((r) => /^\| `([a-z0-9]+)` \|/.exec(r)?.[1]).sort()).toEqual([ORGMEM_FORMAT, ...IMPORT_FORMATS.map((f) => f.name)].sort());
});

describe('importing the other stores files', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  });
  afterAll(() => server?.close());

  /** The import as its job left it (or the refusal). */
  const send = (t: Tenant, body: unknown, headers: Record<string, string> = {}) => importAndWait(server.url, t.key, { body, headers });
  const iso = (v: unknown) => (v == null ? null : new Date(v as string).toISOString());
  /** Every memory of the tenant, as stored, by text. */
  async function stored(t: Tenant): Promise<Map<string, Stored>> {
    const rows = await server.app.db.query<Stored>(
      `select text, collection, container_tag, category, source, pinned, archived, observed_at, valid_from, valid_to, metadata, embedding is not null as embedded
         from memories where tenant_id = $1`,
      [t.id],
    );
    return new Map(rows.map((r) => [r.text, { ...r, observed_at: iso(r.observed_at)!, valid_from: iso(r.valid_from)!, valid_to: iso(r.valid_to) }]));
  }

  it('mem0: agents or apps are collections, users container tags, ids and times kept; a second import stores nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const first = await send(t, { data: mem0Dump() });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ complete: true, total: 5, imported: 3, skipped: 2, already_imported: 0, pending: 0 });
    expect(first.body.collections).toEqual(['concierge-app', 'mem0', 'travel-bot']);
    // Each refused record is named by its place in the file and its field.
    expect(first.body.errors).toEqual([
      { index: 3, detail: expect.stringMatching(/^results\.3\.memory: /) },
      { index: 4, detail: 'results.4.created_at: not a date and time' },
    ]);
    const memories = await stored(t);
    expect(memories.get('Prefers aisle seats on long flights')).toMatchObject({
      collection: 'travel-bot',
      container_tag: 'alice',
      category: 'travel',
      source: 'import',
      // The source's time, in UTC, not the time of the import.
      observed_at: '2024-03-05T17:15:00.123Z',
      valid_from: '2024-03-05T17:15:00.123Z',
      embedded: true,
      metadata: {
        confidence: 'high',
        import_source: 'mem0:6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e01',
        source_fields: { user_id: 'alice', agent_id: 'travel-bot', categories: ['travel', 'preferences'], hash: 'a1' },
      },
    });
    // Where it came from, on the memory as answered: the record's key in the other store.
    const listed = (await t.api('GET', '/v1/memory/collections/travel-bot/memories')).body as Array<{ text: string; provenance: unknown }>;
    expect(listed.find((m) => m.text === 'Prefers aisle seats on long flights')?.provenance).toEqual({
      kind: 'import',
      import_source: 'mem0:6f1c2a8e-1d2b-4c3d-9e8f-0a1b2c3d4e01',
    });
    // A time without an offset is read as UTC; an app with a space makes a valid collection name.
    expect(memories.get('Is allergic to peanuts')).toMatchObject({
      collection: 'concierge-app',
      container_tag: 'alice',
      observed_at: '2023-11-20T18:00:00.000Z',
    });
    // No user: the run is the container tag.
    expect(memories.get('The itinerary for the Lisbon trip was confirmed')).toMatchObject({ collection: 'mem0', container_tag: 'run-42', category: 'fact' });

    // Again, without an idempotency key, and as a bare list: nothing is stored twice.
    const again = await send(t, { data: mem0Dump().results });
    expect(again.body).toMatchObject({ total: 5, imported: 0, skipped: 2, already_imported: 3, pending: 0 });
    expect((await stored(t)).size).toBe(3);
    // The import answers through its status like any import.
    expect((await t.api('GET', `${IMPORT}/${again.body.import_id}`)).body).toEqual(again.body);
  });

  it('supermemory: documents, their memory entries and a list of entries; forgotten entries archived', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const list = await send(t, { data: supermemoryList(), format: 'supermemory' });
    expect(list.body).toMatchObject({ total: 3, imported: 2, skipped: 1 });
    expect(list.body.errors).toEqual([{ index: 2, detail: expect.stringMatching(/^memories\.2\.content: a document needs content, summary or title/) }]);
    const exported = await send(t, { data: supermemoryExport() });
    expect(exported.body).toMatchObject({ total: 5, imported: 4, skipped: 1 });
    expect(exported.body.errors[0].detail).toMatch(/^documents\.0\.memoryEntries\.3\.memory: /);
    const memories = await stored(t);
    expect(memories.get('Q1 planning: ship the importer first, then the proxy. Owner: Dana.')).toMatchObject({
      collection: 'supermemory',
      container_tag: 'user_dana',
      category: 'document',
      observed_at: '2024-02-12T14:30:00.000Z',
      metadata: {
        source: 'notes-app',
        import_source: 'supermemory:doc_01HZX1',
        source_fields: { custom_id: 'meeting-2024-02-12', container_tags: ['user_dana', 'project_memory'] },
      },
    });
    // A document without content is its title.
    expect(memories.get('Bookmark: pgvector docs')).toMatchObject({ container_tag: 'user_dana' });
    expect(memories.get('Sam lives in Berlin')).toMatchObject({
      category: 'fact',
      container_tag: 'user_sam',
      archived: false,
      observed_at: '2024-05-10T10:01:00.000Z',
    });
    expect(memories.get('Sam lives in Hamburg')).toMatchObject({ archived: true });
    expect(memories.get('Sam has a bakery shift this week')).toMatchObject({ valid_to: '2024-05-17T00:00:00.000Z' });
    // Entries listed on their own are the same entries.
    const entries = supermemoryExport().documents[0]!.memoryEntries;
    expect((await send(t, { data: entries, format: 'supermemory' })).body).toMatchObject({ imported: 0, already_imported: 3, skipped: 1 });
  });

  it('Letta: memory blocks become pinned memories; messages only when asked, tool traffic never', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const blocks = await send(t, { data: lettaAgentFile() });
    expect(blocks.body).toMatchObject({ total: 4, imported: 2, skipped: 2, collections: ['support-agent'] });
    expect(blocks.body.errors).toEqual([
      { index: 2, detail: expect.stringMatching(/^blocks\.3\.value: /) },
      { index: 3, detail: 'agents.0.block_ids.4: names block "block-9", which the file does not hold' },
    ]);
    let memories = await stored(t);
    expect([...memories.keys()].sort()).toEqual(['I am a patient support agent.', 'Name: Priya. Owns a small print shop.']);
    expect(memories.get('Name: Priya. Owns a small print shop.')).toMatchObject({
      pinned: true,
      category: 'human',
      collection: 'support-agent',
      // A block has no time of its own: the file's.
      observed_at: '2025-01-06T00:00:00.000Z',
      metadata: { source_fields: { kind: 'block', agent: 'support agent', label: 'human', limit: 5000 } },
    });

    // With the messages: the blocks are already there, what the user and the agent said is added.
    const withMessages = await send(t, { data: lettaAgentFile(), include_messages: true });
    expect(withMessages.body).toMatchObject({ total: 7, imported: 2, already_imported: 2, skipped: 3 });
    expect(withMessages.body.errors[2]).toEqual({ index: 6, detail: expect.stringMatching(/^agents\.0\.messages\.5\.created_at: /) });
    memories = await stored(t);
    expect(memories.get('My printer shows error E42.')).toMatchObject({ pinned: false, category: 'message', observed_at: '2025-01-05T09:01:00.000Z' });
    expect(memories.get('E42 is a paper jam: open the rear tray.')!.metadata.source_fields).toMatchObject({ role: 'assistant' });
    expect(memories.has('You are a helpful support agent.')).toBe(false);
    expect(memories.has('{"result": "E42: paper jam"}')).toBe(false);

    // The older shape: one agent with its core memory.
    const legacy = await send(t, { data: lettaLegacyAgent(), format: 'letta', into_collection: 'letta-old' });
    expect(legacy.body).toMatchObject({ imported: 2, collections: ['letta-old'] });
    expect((await stored(t)).get('The user is called Ken.')).toMatchObject({ pinned: true, collection: 'letta-old', observed_at: '2024-09-01T08:00:00.000Z' });
  });

  it("Zep: a user's threads and facts; a fact's validity kept, an expired fact archived", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await send(t, { data: zepExport() });
    expect(res.body).toMatchObject({ total: 6, imported: 4, skipped: 2 });
    expect(res.body.errors.map((e: { detail: string }) => e.detail.split(':')[0])).toEqual(['threads.0.messages.2.created_at', 'edges.2.fact']);
    const memories = await stored(t);
    expect(memories.get('I love my Adidas running shoes.')).toMatchObject({
      collection: 'zep',
      container_tag: 'user-kendra',
      category: 'message',
      observed_at: '2024-08-01T10:00:00.000Z',
      metadata: { source_fields: { role: 'user', name: 'Kendra', thread_id: 'thread-1' } },
    });
    expect(memories.get('Kendra loves Adidas shoes')).toMatchObject({
      category: 'fact',
      observed_at: '2024-08-01T10:00:10.000Z',
      valid_from: '2024-08-01T10:00:00.000Z',
      valid_to: '2024-09-15T00:00:00.000Z',
      archived: true,
    });
    expect(memories.get('Kendra prefers Puma shoes')).toMatchObject({ valid_from: '2024-09-15T00:00:00.000Z', valid_to: null, archived: false });
    // A thread's listing as the API answers it is detected as Zep too.
    const listing = await send(t, { data: zepMessageListing() });
    expect(listing.body).toMatchObject({ imported: 2, collections: ['zep'] });
    expect((await stored(t)).get('Book a table for two on Friday.')).toMatchObject({ container_tag: null });
  });

  it("Zep: a graph's nodes (entities) become memories with their summaries, beside its edges' facts", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await send(t, { data: zepGraph() });
    expect(res.body).toMatchObject({ total: 4, imported: 3, skipped: 1 });
    expect(res.body.errors).toEqual([{ index: 3, detail: expect.stringMatching(/^nodes\.2\.name: /) }]);
    const memories = await stored(t);
    expect(memories.get('Kendra: Kendra runs about 10k a week and prefers Puma shoes.')).toMatchObject({
      collection: 'zep',
      container_tag: 'user-kendra',
      category: 'entity',
      observed_at: '2024-08-01T10:00:10.000Z',
      metadata: {
        import_source: 'zep:n1',
        source_fields: { kind: 'node', name: 'Kendra', labels: ['Person'], attributes: { city: 'Austin' }, user_id: 'user-kendra' },
      },
    });
    // A node without a summary is its name.
    expect(memories.get('Puma')).toMatchObject({ category: 'entity', metadata: { import_source: 'zep:n2' } });
    expect(memories.get('Kendra prefers Puma shoes')).toMatchObject({ category: 'fact' });
    // A bare list of nodes is read as nodes, and nothing is stored twice.
    const again = await send(t, { data: zepGraph().nodes, format: 'zep' });
    expect(again.body).toMatchObject({ total: 3, imported: 0, already_imported: 2, skipped: 1 });
  });

  it('Portable AI Memory: types are categories, statuses archive, temporal gives the times', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const res = await send(t, { data: pamStore() });
    expect(res.body).toMatchObject({ total: 4, imported: 2, skipped: 2 });
    expect(res.body.errors).toEqual([
      { index: 2, detail: expect.stringMatching(/^memories\.2\.temporal: /) },
      // Its integrity: the content no longer gives its content_hash.
      { index: 3, detail: expect.stringMatching(/^memories\.3\.content_hash: does not match the content/) },
    ]);
    const memories = await stored(t);
    expect(memories.get('Writes Rust and TypeScript daily')).toMatchObject({
      collection: 'pam',
      container_tag: 'owner-77',
      category: 'skill',
      observed_at: '2024-02-02T08:00:00.000Z',
      valid_from: '2020-01-01T00:00:00.000Z',
      valid_to: null,
      archived: false,
      metadata: {
        language: 'en',
        import_source: 'pam:owner-77/m-1',
        // A relation to another memory of the file names it by its import key, which finds it whatever its new id.
        relations: [{ type: 'related_to', to: 'pam:owner-77/m-2' }],
        source_fields: { type: 'skill', tags: ['programming'], confidence: 0.85, platform: 'chatgpt' },
      },
    });
    expect(memories.get('Vegetarian on weekdays')).toMatchObject({ category: 'dietary_rule', archived: true, valid_to: '2024-01-01T00:00:00.000Z' });
    // A relation naming a memory the file does not hold is left out.
    expect(memories.get('Vegetarian on weekdays')!.metadata).not.toHaveProperty('relations');
    const target = (
      await server.app.db.query<{ id: string }>(`select id from memories where tenant_id = $1 and metadata->>'import_source' = $2`, [t.id, 'pam:owner-77/m-2'])
    )[0];
    expect(target).toBeDefined();
    // Another major version is refused whole, nothing stored.
    const v2 = await send(t, { data: { ...pamStore(), schema_version: '2.0' } });
    expect(v2.status).toBe(422);
    expect(v2.body.detail).toMatch(/^Invalid request: data: not a pam file: schema_version "2.0" is not supported/);
  });

  it('the PAM export round-trips through the PAM import, once', async () => {
    const a = await newTenant(server.url, server.adminKey);
    await a.api('POST', '/v1/memory/collections/team/memories/bulk', [
      { text: 'We ship on Thursdays', category: 'decision', container_tag: 'ops', observed_at: '2023-04-04T04:04:04Z', importance: 0.9 },
      { text: 'Dana prefers  short   standups', category: 'preference', valid_from: '2023-01-01T00:00:00Z', valid_to: '2030-01-01T00:00:00Z' },
    ]);
    await a.api('POST', '/v1/memory/collections/notes/memories', { text: 'The office moved to Porto', category: 'fact' });
    const res = await fetch(`${server.url}/v1/memory/admin/export?format=pam`, { headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="memory-store-\d{4}-\d\d-\d\d\.json"/);
    const file = await res.json();
    expect(file).toMatchObject({ schema: 'portable-ai-memory', schema_version: '1.0', owner: { id: a.id }, export_type: 'full' });
    expect(file.memories).toHaveLength(3);
    const standup = file.memories.find((m: { content: string }) => m.content.startsWith('Dana'));
    // PAM's content hash: trimmed, lowercased, NFC, runs of spaces made one.
    const expected = createHash('sha256').update('dana prefers short standups').digest('hex');
    expect(standup).toMatchObject({
      type: 'preference',
      custom_type: null,
      status: 'active',
      content_hash: `sha256:${expected}`,
      provenance: { platform: 'orgmem' },
    });
    expect(file.memories.find((m: { content: string }) => m.content.startsWith('We ship'))).toMatchObject({ type: 'custom', custom_type: 'decision' });

    const b = await newTenant(server.url, server.adminKey);
    const imported = await send(b, { data: file });
    expect(imported.body).toMatchObject({ total: 3, imported: 3, skipped: 0, collections: ['notes', 'team'] });
    const original = await stored(a);
    const copy = await stored(b);
    for (const [text, m] of original) {
      expect(copy.get(text)).toMatchObject({
        collection: m.collection,
        container_tag: m.container_tag,
        category: m.category,
        observed_at: m.observed_at,
        valid_from: m.valid_from,
        valid_to: m.valid_to,
        pinned: m.pinned,
      });
    }
    expect((await send(b, { data: file, format: 'pam' })).body).toMatchObject({ imported: 0, already_imported: 3 });
    expect((await stored(b)).size).toBe(3);
    // The default export is orgmem's own, unchanged.
    const own = await (await fetch(`${server.url}/v1/memory/admin/export`, { headers: { authorization: `Bearer ${a.key}` } })).json();
    expect(own.version).toBe(1);
  });

  it('refuses a file it cannot read whole, and stores nothing of it', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const unknown = await send(t, { data: { rows: [{ x: 1 }] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ path: 'data', message: expect.stringMatching(/not a format the import knows: name it with format/) }]);
    const wrong = await send(t, { data: mem0Dump(), format: 'letta' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail).toMatch(/data: not a letta file/);
    const both = await send(t, { data: mem0Dump(), memories: [] });
    expect(both.status).toBe(422);
    expect(both.body.detail).toMatch(/send either memories \(orgmem items\) or data \(a whole file\)/);
    expect((await send(t, { format: 'mem0' })).status).toBe(422);
    expect((await send(t, { data: 'just text' })).status).toBe(422);
    expect((await send(t, { data: mem0Dump(), format: 'nosuch' })).status).toBe(422);
    // A named orgmem file must be one.
    expect((await send(t, { data: [], format: 'orgmem' })).status).toBe(422);
    expect((await stored(t)).size).toBe(0);
    expect((await server.app.db.query('select id from imports where tenant_id = $1', [t.id])).length).toBe(0);
  });

  it("takes orgmem's own export as data too, and an idempotency key as any import does", async () => {
    const t = await newTenant(server.url, server.adminKey);
    const file = { version: 1, collections: [{ name: 'kept', description: 'from the export' }], memories: [{ text: 'one', collection: 'kept' }, { text: '' }] };
    const first = await send(t, { data: file }, { 'idempotency-key': 'own-file' });
    expect(first.body).toMatchObject({ imported: 1, skipped: 1, idempotency_key: 'own-file' });
    expect((await send(t, { data: file }, { 'idempotency-key': 'own-file' })).body).toEqual(first.body);
    expect((await t.api('GET', '/v1/memory/collections/kept')).body.description).toBe('from the export');
    // The same key with a file of another format is another body.
    expect((await send(t, { data: mem0Dump() }, { 'idempotency-key': 'own-file' })).status).toBe(422);
    // tRPC callers send the file the same way.
    const viaTrpc = await trpcClient(server.url, t.key).admin.import.mutate({ data: zepMessageListing() });
    // Answered as it starts; its job stores it.
    expect(viaTrpc).toMatchObject({ state: 'queued', complete: false, total: 2, pending: 2 });
    const done = await until('the import done', async () => {
      const status = await t.api('GET', `${IMPORT}/${viaTrpc.import_id}`);
      return status.body.complete ? status.body : undefined;
    });
    expect(done).toMatchObject({ state: 'done', imported: 2, pending: 0 });
  });

  it('two imports of the same file at once store each record once', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const many = {
      results: Array.from({ length: 250 }, (_, i) => ({ id: `same-${i}`, memory: `fact number ${i}`, user_id: 'u', created_at: '2024-01-01T00:00:00Z' })),
    };
    const [a, b] = await Promise.all([send(t, { data: many }), send(t, { data: many })]);
    expect(a.body.imported + b.body.imported).toBe(250);
    expect(a.body.already_imported + b.body.already_imported).toBe(250);
    expect((await stored(t)).size).toBe(250);
  });

  it('a key that may not write a collection skips its records with the reason', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const writer = await t.newKey('writer');
    await t.api('POST', '/v1/memory/collections', { name: 'travel-bot' });
    await t.api('PUT', '/v1/memory/collections/travel-bot/grants', { agent_key_id: writer.id, can_read: true, can_write: true });
    const res = await send(t, { data: mem0Dump() });
    expect(res.body).toMatchObject({ imported: 2, skipped: 3 });
    expect(res.body.errors).toContainEqual({ index: 0, detail: 'this API key may not write collection "travel-bot"' });
  });
});
