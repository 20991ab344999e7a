import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/maintenance/migrate.ts';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { rememberSync } from './support/graph.ts';
import { importAndWait } from './support/imports.ts';
import { startServer, type TestServer } from './support/server.ts';

const { url, adminKey } = shared();
const C = '/v1/memory/collections';
let t: Tenant;

beforeAll(async () => {
  t = await newTenant(url, adminKey);
});

describe('collections', () => {
  it('create, get, update, list and delete', async () => {
    const created = await t.api('POST', C, { name: 'projects', description: 'Project notes', metadata: { team: 'core' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'projects', description: 'Project notes', metadata: { team: 'core' }, memory_count: 0, restricted: false });
    expect((await t.api('GET', `${C}/projects`)).body).toEqual(created.body);

    const updated = await t.api('PUT', `${C}/projects`, { description: 'All project notes' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ description: 'All project notes', metadata: { team: 'core' } });

    await t.api('POST', `${C}/projects/memories`, { text: 'kickoff on Monday' });
    const list = await t.api('GET', C);
    expect(list.body).toEqual([expect.objectContaining({ name: 'projects', memory_count: 1 })]);

    const mem = (await t.api('GET', `${C}/projects/memories`)).body[0];
    expect((await t.api('DELETE', `${C}/projects`)).status).toBe(204);
    expect((await t.api('GET', `${C}/projects`)).status).toBe(404);
    expect((await t.api('GET', `${C}/projects/memories/${mem.id}`)).status).toBe(404);
    expect((await t.api('GET', C)).body).toEqual([]);
  });

  it('counts the memories its listing shows, and the archived ones apart, through every write that archives, restores, moves or deletes', async () => {
    /** The collection's counts, checked against its listings (the default one, and the archived only) and the collections list. */
    const counts = async (name: string) => {
      const got = (await t.api('GET', `${C}/${name}`)).body;
      const shown = (await t.api('GET', `${C}/${name}/memories?limit=200`)).body.length;
      const archived = (await t.api('GET', `${C}/${name}/memories?limit=200&archived=true`)).body.length;
      expect({ memory_count: got.memory_count, archived_count: got.archived_count }, name).toEqual({ memory_count: shown, archived_count: archived });
      const listed = (await t.api('GET', C)).body.find((c: { name: string }) => c.name === name);
      expect(listed).toMatchObject({ memory_count: shown, archived_count: archived });
      return [shown, archived];
    };
    const { ids } = (
      await t.api(
        'POST',
        `${C}/life/memories/bulk`,
        ['one', 'two', 'three', 'four'].map((text) => ({ text })),
      )
    ).body;
    expect(await counts('life')).toEqual([4, 0]);
    const archive = (collection: string, id: string, archived: boolean) => t.api('POST', `${C}/${collection}/memories/${id}/archive`, { archived });
    for (const id of [ids[0], ids[1], ids[1]]) expect((await archive('life', id, true)).status).toBe(200);
    expect(await counts('life')).toEqual([2, 2]);
    expect((await archive('life', ids[0], false)).status).toBe(200);
    expect(await counts('life')).toEqual([3, 1]);
    // An edit of an archived memory leaves it archived.
    expect((await t.api('PATCH', `${C}/life/memories/${ids[1]}`, { text: 'two, edited' })).status).toBe(200);
    expect(await counts('life')).toEqual([3, 1]);
    // Moved, it is archived where it goes; deleted, it is gone from the archived count.
    expect((await t.api('POST', `${C}/life/memories/${ids[1]}/move`, { to_collection: 'attic' })).status).toBe(200);
    expect([await counts('life'), await counts('attic')]).toEqual([
      [3, 0],
      [0, 1],
    ]);
    expect((await t.api('DELETE', `${C}/attic/memories/${ids[1]}`)).status).toBe(204);
    expect(await counts('attic')).toEqual([0, 0]);
    // Remember archives the raw text once its facts exist; forget erases archived memories too.
    expect((await rememberSync(t, 'life', 'Ana lives in Porto.')).status).toBe(200);
    const [afterRemember, archivedByRemember] = await counts('life');
    expect(archivedByRemember).toBe(1);
    expect(afterRemember).toBeGreaterThan(3);
    expect((await t.api('POST', `${C}/life/forget`, { query: 'Ana lives in Porto.', min_score: 0.3 })).body.deleted).toBeGreaterThan(0);
    expect((await counts('life'))[1]).toBe(0);
    // An import brings archived memories as archived.
    const imported = await importAndWait(url, t.key, {
      body: { memories: [{ text: 'old', archived: true }, { text: 'current' }], into_collection: 'imported' },
    });
    expect(imported.body).toMatchObject({ state: 'done', imported: 2 });
    expect(await counts('imported')).toEqual([1, 1]);
  });

  it('creating an existing name is 409', async () => {
    expect((await t.api('POST', C, { name: 'twice' })).status).toBe(201);
    const again = await t.api('POST', C, { name: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already exists/);
  });

  it('unknown collections are 404 on get, put and delete', async () => {
    expect((await t.api('GET', `${C}/nope`)).status).toBe(404);
    expect((await t.api('PUT', `${C}/nope`, { description: 'x' })).status).toBe(404);
    expect((await t.api('DELETE', `${C}/nope`)).status).toBe(404);
  });

  it.each([
    ['empty', ''],
    ['leading dot', '.x'],
    ['space', 'a b'],
    ['slash-free unicode', 'café'],
    ['65 characters', 'a'.repeat(65)],
  ])('a name with %s is 422', async (_label, name) => {
    const res = await t.api('POST', C, { name });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].path).toBe('name');
  });

  it('metadata must be an object', async () => {
    expect((await t.api('POST', C, { name: 'meta', metadata: 'no' })).status).toBe(422);
  });

  it('another tenant sees none of it', async () => {
    await t.api('POST', C, { name: 'private' });
    const other = await newTenant(url, adminKey);
    expect((await other.api('GET', C)).body).toEqual([]);
    expect((await other.api('GET', `${C}/private`)).status).toBe(404);
    expect((await other.api('DELETE', `${C}/private`)).status).toBe(404);
    expect((await t.api('GET', `${C}/private`)).status).toBe(200);
  });
});

describe("a collection's updated_at", () => {
  // A server of its own, to read the collection's row (its version counts the updates made to it).
  let server: TestServer;
  let u: Tenant;
  beforeAll(async () => {
    server = await startServer({ ORGMEM_EMBEDDER: 'hash' }, { worker: false });
    u = await newTenant(server.url, server.adminKey);
  });
  afterAll(() => server?.close());

  const row = async (name: string) => {
    const [r] = await server.app.db.query<{ version: number; updated_at: Date }>(
      'select version::int as version, updated_at from collections where tenant_id = $1 and name = $2',
      [u.id, name],
    );
    return { version: r!.version, updated_at: r!.updated_at.toISOString() };
  };
  const updatedAt = async (name: string) => (await u.api('GET', `${C}/${name}`)).body.updated_at as string;

  it('moves with every change to its memories, in the same transaction, once per statement', async () => {
    const created = await u.api('POST', C, { name: 'dated' });
    let before = created.body.updated_at as string;
    // now() is the transaction's start: equal to the memory's own timestamp means the same transaction.
    const added = await u.api('POST', `${C}/dated/memories`, { text: 'The ferry timetable changes in May' });
    expect(await updatedAt('dated')).toBe(added.body.created_at);
    expect(added.body.created_at > before).toBe(true);

    const { version } = await row('dated');
    const bulk = await u.api(
      'POST',
      `${C}/dated/memories/bulk`,
      Array.from({ length: 100 }, (_, i) => ({ text: `Buoy ${i} is painted red` })),
    );
    expect(bulk.body.created).toBe(100);
    // One update of the collection's row for the hundred inserts, not one per row.
    const first = await u.api('GET', `${C}/dated/memories/${bulk.body.ids[0]}`);
    expect(await row('dated')).toEqual({ version: version + 1, updated_at: first.body.created_at });

    const patched = await u.api('PATCH', `${C}/dated/memories/${added.body.id}`, { importance: 0.9 });
    expect(await updatedAt('dated')).toBe(patched.body.updated_at);

    const moved = await u.api('POST', `${C}/dated/memories/${added.body.id}/move`, { to_collection: 'elsewhere' });
    expect(moved.status).toBe(200);
    expect(await updatedAt('dated')).toBe(moved.body.updated_at);
    expect(await updatedAt('elsewhere')).toBe(moved.body.updated_at);

    before = await updatedAt('elsewhere');
    expect((await u.api('DELETE', `${C}/elsewhere/memories/${added.body.id}`)).status).toBe(204);
    expect((await updatedAt('elsewhere')) > before).toBe(true);
  });

  it('counts the archived memories a database held before the archived count existed (sql/042)', async () => {
    const { ids } = (
      await u.api(
        'POST',
        `${C}/older/memories/bulk`,
        ['a', 'b', 'c'].map((text) => ({ text })),
      )
    ).body;
    expect((await u.api('POST', `${C}/plain/memories`, { text: 'd' })).status).toBe(201);
    for (const id of ids.slice(1)) expect((await u.api('POST', `${C}/older/memories/${id}/archive`, { archived: true })).status).toBe(200);
    // Back to before the migration, then migrated again.
    const db = server.app.platform;
    // One statement a call: Citus sends a distributed DDL's text on to the shards, which refuse two commands in one.
    await db.exec('alter table collections drop column archived_count');
    await db.exec('delete from schema_migrations where version = 42');
    await migrate(db, server.app.embedder.dimensions, server.app.config.search.vectorIndex);
    expect((await u.api('GET', `${C}/older`)).body).toMatchObject({ memory_count: 1, archived_count: 2 });
    expect((await u.api('GET', `${C}/plain`)).body).toMatchObject({ memory_count: 1, archived_count: 0 });
  });
});
