import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, VECTOR_STORAGES, type VectorStorage } from '../src/core/config.ts';
import { applyStorage, currentStorage, planStorage, storageMismatch } from '../src/maintenance/vector-storage.ts';
import { graphParams, graphSearch, isBinary } from '../src/ports/db/vector-storage.ts';
import { fillGraph } from '../src/services/memory/graph-tenants.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { embeddingStorage } from './support/database.ts';
import { startServer, type TestServer } from './support/server.ts';

const CORPUS = [
  'Ana prefers oat milk flat whites every morning before standup',
  'The billing service deploy failed because the TLS certificate had expired',
  'Ben spends his weekends bouldering at the climbing gym downtown',
  'The quarterly budget review meeting moved to Thursday afternoon',
  'Chloe is allergic to peanuts, so team lunches must avoid them',
  'The office wifi password rotates on the first day of every month',
];
const QUESTIONS: Array<[string, number]> = [
  ['what kind of coffee does Ana drink', 0],
  ['who goes climbing at the gym on weekends', 2],
  ['Chloe peanuts allergic lunches', 4],
];

// Each storage: a new database is created in it; converted to \`vector\` and back by the
// maintenance step \`orgmem vector-storage\` runs, then searched through the graph and exactly.
describe.each(VECTOR_STORAGES.filter((s) => s !== 'vector'))('vector storage %s', (storage: VectorStorage) => {
  let server: TestServer;
  let t: Tenant;
  const search = (query: string) => t.api('POST', '/v1/memory/collections/notes/search', { query, mode: 'vector', limit: 3, min_score: 0 });

  beforeAll(async () => {
    // Every tenant in the graph (filled below), so that searches can walk it.
    server = await startServer({ ORGMEM_VECTOR_STORAGE: storage, ORGMEM_GRAPH_FROM: '0' });
    t = await newTenant(server.url, server.adminKey);
    expect(
      (
        await t.api(
          'POST',
          '/v1/memory/collections/notes/memories/bulk',
          CORPUS.slice(0, 3).map((text) => ({ text })),
        )
      ).status,
    ).toBe(201);
    await fillGraph(server.app, t.id);
  });
  afterAll(() => server?.close());

  it('is how a new database is created; planned from what the database holds, applied, and then reported as held', async () => {
    expect(await currentStorage(server.app.db)).toMatchObject({ storage, partial: true });
    expect((await planStorage(server.app.db, { storage })).build).toBe(false);
    await applyStorage(server.app.db, await planStorage(server.app.db, { storage: 'vector' }), () => {});
    expect((await currentStorage(server.app.db)).storage).toBe('vector');
    // What the service says at start on such a database.
    expect(storageMismatch(await currentStorage(server.app.db), { storage })).toBe(
      `The embeddings are stored as vector (m 12, ef_construction 32), not as configured, ${storage} (m ${isBinary(storage) ? 16 : 12}, ef_construction ${isBinary(storage) ? 64 : 32}): \`orgmem vector-storage\` converts them (docs/vectors.md).`,
    );
    const plan = await planStorage(server.app.db, { storage });
    expect(plan).toMatchObject({ from: 'vector', to: storage, memories: 3, rewrite: storage.endsWith('halfvec'), build: true });
    expect(plan.graph).toEqual(isBinary(storage) ? { m: 16, efConstruction: 64 } : { m: 12, efConstruction: 32 });
    expect(plan.estimate.build_s).toBeGreaterThanOrEqual(0);
    await applyStorage(server.app.db, plan, () => {});
    expect(await currentStorage(server.app.db)).toMatchObject({ storage, column: storage.endsWith('halfvec') ? 'halfvec' : 'vector' });
    // Kept in the row through the change of type, on a Citus cluster's every shard too.
    expect(new Set(await embeddingStorage(server.app.db))).toEqual(new Set(['p']));
    expect((await planStorage(server.app.db, { storage })).build).toBe(false);
    expect(storageMismatch(await currentStorage(server.app.db), { storage })).toBeUndefined();
  });

  it('stores new memories and updates in the new column', async () => {
    expect(
      (
        await t.api(
          'POST',
          '/v1/memory/collections/notes/memories/bulk',
          CORPUS.slice(3).map((text) => ({ text })),
        )
      ).status,
    ).toBe(201);
    const created = await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'temporary note about parking' });
    expect(created.status).toBe(201);
    const patched = await t.api('PATCH', `/v1/memory/collections/notes/memories/${created.body.id}`, { text: 'The parking garage closes at ten' });
    expect(patched.status).toBe(200);
    const res = await search('when does the parking garage close');
    expect(res.body.results[0].text).toBe('The parking garage closes at ten');
  });

  it('ranks the relevant memory first, exactly and through the graph', async () => {
    const texts = async () => Promise.all(QUESTIONS.map(async ([q]) => (await search(q)).body.results[0].text));
    const expected = QUESTIONS.map(([, i]) => CORPUS[i]);
    expect(await texts()).toEqual(expected);
    // The same searches through the graph: a scope of any size goes to the index (search.md, the cost model).
    server.app.config.search.exactScanMax = 0;
    try {
      expect(await texts()).toEqual(expected);
    } finally {
      server.app.config.search.exactScanMax = undefined;
    }
  });

  it('orders a graph search by the index it built', async () => {
    const vector = `[${(await server.app.embedder.embed(['coffee']))[0]!.join(',')}]`;
    // Without parameters, so that on Citus the coordinator can show a shard's plan.
    const statement = graphSearch(storage, server.app.embedder.dimensions, {
      columns: 'm.id',
      q: `'${vector}'::vector`,
      where: 'm.graphed',
      k: 3,
      candidates: 12,
    });
    const plan = await server.app.db.transaction(async (tx) => {
      await tx.query(`set local enable_seqscan to off`);
      return tx.query<Record<string, unknown>>(`explain ${statement}`);
    });
    expect(plan.map((r) => Object.values(r)[0]).join('\n')).toMatch(/Index Scan using memories_embedding(_\d+)? /);
  });
});

describe('the graph built and searched as the deployment says', () => {
  let server: TestServer;
  let t: Tenant;
  /** The statements and parameters the service sends while recording. */
  const sent: Array<{ sql: string; params: unknown[] }> = [];

  beforeAll(async () => {
    server = await startServer({
      ORGMEM_VECTOR_STORAGE: 'binary-halfvec',
      ORGMEM_VECTOR_M: '8',
      ORGMEM_VECTOR_EF_CONSTRUCTION: '20',
      ORGMEM_VECTOR_EF_SEARCH: '123',
      ORGMEM_VECTOR_RERANK: '3',
      ORGMEM_GRAPH_FROM: '0',
    });
    t = await newTenant(server.url, server.adminKey);
    expect(
      (
        await t.api(
          'POST',
          '/v1/memory/collections/notes/memories/bulk',
          CORPUS.map((text) => ({ text })),
        )
      ).status,
    ).toBe(201);
    await fillGraph(server.app, t.id);
  });
  afterAll(() => server?.close());

  it('creates a new database with its graph, rebuilds the graph when only its parameters change, and then holds them', async () => {
    const db = server.app.db;
    const config = server.app.config.search.vectorIndex;
    expect(await currentStorage(db)).toMatchObject({ storage: 'binary-halfvec', graph: { m: 8, efConstruction: 20 }, partial: true });
    expect((await planStorage(db, config)).build).toBe(false);
    // The same storage with another graph is a rebuild without a rewrite, and so is the way back.
    const denser = await planStorage(db, { storage: 'binary-halfvec', m: 10 });
    expect(denser).toMatchObject({ fromGraph: { m: 8, efConstruction: 20 }, graph: { m: 10, efConstruction: 64 }, rewrite: false, build: true });
    await applyStorage(db, denser, () => {});
    expect((await currentStorage(db)).graph).toEqual({ m: 10, efConstruction: 64 });
    const back = await planStorage(db, config);
    expect(back).toMatchObject({
      from: 'binary-halfvec',
      fromGraph: { m: 10, efConstruction: 64 },
      graph: { m: 8, efConstruction: 20 },
      rewrite: false,
      build: true,
    });
    await applyStorage(db, back, () => {});
    expect(await currentStorage(db)).toMatchObject({ storage: 'binary-halfvec', graph: { m: 8, efConstruction: 20 } });
    expect((await planStorage(db, config)).build).toBe(false);
  });

  it('rebuilds an index of every row (a database from before sql/039) as partial on the graphed rows', async () => {
    const db = server.app.db;
    const [{ def }] = (await db.query<{ def: string }>(`select pg_get_indexdef('memories_embedding'::regclass) as def`)) as [{ def: string }];
    expect(def).toMatch(/ WHERE graphed$/);
    await db.exec(`drop index memories_embedding`);
    await db.exec(def.replace(/ WHERE graphed$/, ''));
    expect(await currentStorage(db)).toMatchObject({ storage: 'binary-halfvec', partial: false });
    const plan = await planStorage(db, server.app.config.search.vectorIndex);
    expect(plan).toMatchObject({ rewrite: false, build: true, memories: CORPUS.length, graphed: CORPUS.length });
    await applyStorage(db, plan, () => {});
    expect(await currentStorage(db)).toMatchObject({ partial: true });
    expect((await planStorage(db, server.app.config.search.vectorIndex)).build).toBe(false);
  });

  it('walks the graph with the configured ef_search and re-ranks the configured candidates a result', async () => {
    const db = server.app.db;
    const query = db.query.bind(db);
    db.query = ((sql: string, params?: unknown[]) => {
      sent.push({ sql, params: params ?? [] });
      return query(sql, params);
    }) as typeof db.query;
    server.app.config.search.exactScanMax = 0;
    try {
      const res = await t.api('POST', '/v1/memory/collections/notes/search', { query: QUESTIONS[0]![0], mode: 'vector', limit: 3, min_score: 0 });
      expect(res.status).toBe(200);
      expect(res.body.results[0].text).toBe(CORPUS[QUESTIONS[0]![1]]);
    } finally {
      server.app.config.search.exactScanMax = undefined;
      db.query = query;
    }
    const walk = sent.find((s) => s.sql.includes('<~>'));
    expect(walk).toBeDefined();
    const [inner, outer] = [...walk!.sql.matchAll(/limit (\d+)/g)].map((m) => Number(m[1]));
    expect(inner).toBe(3 * outer!);
    expect(walk!.params).toContain('123');
  });

  it('refuses a graph pgvector could not build, and derives what is left unset', () => {
    expect(() => loadConfig({ ORGMEM_VECTOR_M: '16', ORGMEM_VECTOR_EF_CONSTRUCTION: '20' })).toThrow(
      /ORGMEM_VECTOR_EF_CONSTRUCTION: must be at least twice ORGMEM_VECTOR_M/,
    );
    for (const [name, value] of [
      ['ORGMEM_VECTOR_M', '1'],
      ['ORGMEM_VECTOR_M', 'many'],
      ['ORGMEM_VECTOR_EF_CONSTRUCTION', '1001'],
      ['ORGMEM_VECTOR_EF_SEARCH', '5'],
      ['ORGMEM_VECTOR_RERANK', '0'],
      ['ORGMEM_VECTOR_RERANK', '1.5'],
    ]) {
      expect(() => loadConfig({ [name!]: value })).toThrow(new RegExp(`Invalid configuration:\\n  ${name}: `));
    }
    expect(graphParams({ storage: 'vector' })).toEqual({ m: 12, efConstruction: 32 });
    expect(graphParams({ storage: 'vector', m: 24 })).toEqual({ m: 24, efConstruction: 48 });
    expect(graphParams({ storage: 'halfvec', efConstruction: 16 })).toEqual({ m: 8, efConstruction: 16 });
    expect(graphParams({ storage: 'binary-vector' })).toEqual({ m: 16, efConstruction: 64 });
  });

  it('defaults to the binary graph re-ranked on halfvec for a real model, and to the halfvec graph for the hash embedder', () => {
    const storage = (env: Record<string, string>) => loadConfig(env).search.vectorIndex.storage;
    expect(storage({})).toBe('binary-halfvec');
    expect(storage({ ORGMEM_EMBEDDER: 'local' })).toBe('binary-halfvec');
    expect(storage({ ORGMEM_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:9/v1' })).toBe('binary-halfvec');
    expect(storage({ ORGMEM_EMBEDDER: 'hash' })).toBe('halfvec');
    expect(storage({ ORGMEM_EMBEDDER: 'hash', ORGMEM_VECTOR_STORAGE: 'binary-vector' })).toBe('binary-vector');
    expect(storage({ ORGMEM_VECTOR_STORAGE: 'vector' })).toBe('vector');
    expect(() => loadConfig({ ORGMEM_VECTOR_STORAGE: 'float16' })).toThrow(/Invalid configuration:\n {2}ORGMEM_VECTOR_STORAGE: /);
    // Its re-rank takes the 1,000 candidates (50 a result of k = 20) that bring recall@10 at 1M to 0.988.
    expect(loadConfig({}).search.rerank).toBe(50);
  });
});
