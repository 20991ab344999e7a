import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { closeApp, createApp } from '../host/app.ts';
import { buildServer } from '../host/server.ts';
import { loadConfig } from '../src/core/config.ts';
import { toVectorLiteral } from '../src/ports/db/db.ts';
import { openPglite } from '../src/ports/db/pglite.ts';
import { openPostgres } from '../src/ports/db/postgres.ts';
import { hashEmbedder } from '../src/ports/embedder/hash.ts';
import { reembed } from '../src/maintenance/reembed.ts';
import { currentStorage } from '../src/maintenance/vector-storage.ts';
import { createTenant } from '../src/services/access/tenants.ts';
import { fillGraph } from '../src/services/memory/graph-tenants.ts';
import { embeddingStorage, freshDatabase } from './support/database.ts';
import { newTenant } from './support/client.ts';
import { startServer } from './support/server.ts';

const silent = pino({ level: 'silent' });

async function reembedBack(env: Record<string, string>) {
  const raw = env.DATABASE_URL ? openPostgres(env.DATABASE_URL, 1) : await openPglite(env.ORGMEM_DATA_DIR!);
  await reembed(raw, hashEmbedder(512), silent);
  await raw.close();
}

describe('database', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'orgmem-db-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('refuses to start with an embedder of another dimension, naming the re-embed command', async () => {
    const server = await startServer({}, { worker: false });
    const env: Record<string, string> = server.app.config.databaseUrl ? { DATABASE_URL: server.app.config.databaseUrl } : {};
    try {
      if (!server.app.config.databaseUrl) {
        // An in-memory PGlite cannot be reopened; use a data directory for the embedded case.
        const dir = tempDir();
        const first = await createApp(loadConfig({ ORGMEM_DATA_DIR: dir }), { embedder: hashEmbedder(512), log: silent });
        await closeApp(first);
        Object.assign(env, { ORGMEM_DATA_DIR: dir });
      }
      const again = createApp(loadConfig(env), { embedder: hashEmbedder(384), log: silent });
      await expect(again).rejects.toThrow(/stores 512-dimensional embeddings but the configured embedder produces 384.*orgmem reembed/);
      // `orgmem reembed` moves the database to the new embedder, keeping every memory.
      const old = await createApp(loadConfig(env), { embedder: hashEmbedder(512), log: silent });
      await old.db.query(`insert into tenants (id, name, email) values ('01900000-0000-7000-8000-00000000aaaa', 'r', 'r@x')`);
      await old.db.query(`insert into collections (tenant_id, name) values ('01900000-0000-7000-8000-00000000aaaa', 'c')`);
      const v = toVectorLiteral((await hashEmbedder(512).embed(['old']))[0]!);
      await old.db.query(
        `insert into memories (tenant_id, id, collection, text, embedding) values ('01900000-0000-7000-8000-00000000aaaa', '01900000-0000-7000-8000-00000000bbbb', 'c', 'kept through re-embedding', $1::vector)`,
        [v],
      );
      await closeApp(old);
      const raw = env.DATABASE_URL ? openPostgres(env.DATABASE_URL, 1) : await openPglite(env.ORGMEM_DATA_DIR!);
      const result = await reembed(raw, hashEmbedder(384), silent);
      await raw.close();
      expect(result).toEqual({ from: 512, to: 384, memories: 1 });
      const moved = await createApp(loadConfig(env), { embedder: hashEmbedder(384), log: silent });
      const [mem] = await moved.db.query<{ dims: number; text: string }>('select vector_dims(embedding) as dims, text from memories');
      expect(mem).toEqual({ dims: 384, text: 'kept through re-embedding' });
      // The column and its vector index come back as they were: the bundled embedder's default
      // storage (binary-halfvec), its codes as long as the new vectors, its graph's parameters,
      // partial, and the embedding kept in the row (sql/007).
      const [index] = await moved.db.query<{ def: string }>(`select pg_get_indexdef('memories_embedding'::regclass) as def`);
      expect(index!.def).toMatch(
        /USING hnsw \(\(\(binary_quantize\(embedding\)\)::bit\(384\)\) bit_hamming_ops\) WITH \(m='16', ef_construction='64'\) WHERE graphed$/,
      );
      expect(await currentStorage(moved.db)).toMatchObject({ storage: 'binary-halfvec', column: 'halfvec', dim: 384 });
      // On a Citus cluster's every shard too.
      expect(new Set(await embeddingStorage(moved.db))).toEqual(new Set(['p']));
      await closeApp(moved);
      await reembedBack(env);
      // The same dimension still opens, and migrating twice is a no-op.
      const ok = await createApp(loadConfig(env), { embedder: hashEmbedder(512), log: silent });
      const [row] = await ok.db.query<{ n: number }>('select count(*)::int as n from schema_migrations');
      expect(row!.n).toBeGreaterThanOrEqual(2);
      await closeApp(ok);
    } finally {
      await server.close();
    }
    // Embedded, this opens PGlite five times (seconds each in WASM).
  }, 180_000);

  it('an existing database keeps the storage it was created with: the service says so at start, walks its graph and casts new rows to its column', async () => {
    const base = process.env.TEST_DATABASE_URL;
    const fresh = base ? await freshDatabase(base) : undefined;
    const env: Record<string, string> = { ...(fresh ? { DATABASE_URL: fresh.url } : { ORGMEM_DATA_DIR: tempDir() }), ORGMEM_GRAPH_FROM: '0' };
    try {
      await closeApp(await createApp(loadConfig({ ...env, ORGMEM_VECTOR_STORAGE: 'vector' }), { embedder: hashEmbedder(512), log: silent }));
      const said: string[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => void said.push((JSON.parse(line) as { msg: string }).msg) });
      // The bundled embedder's default storage (binary-halfvec) configured, the database created with vector.
      const app = await createApp(loadConfig(env), { embedder: hashEmbedder(512), log });
      const server = await buildServer(app);
      try {
        expect(app.config.search.vectorIndex.storage).toBe('binary-halfvec');
        expect(app.vectorStorage).toBe('vector');
        expect(said).toEqual([
          'The embeddings are stored as vector (m 12, ef_construction 32), not as configured, binary-halfvec (m 16, ef_construction 64): `orgmem vector-storage` converts them (docs/vectors.md).',
        ]);
        await server.listen({ host: '127.0.0.1', port: 0 });
        const url = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
        const admin = await createTenant(app, { name: 'operator', email: 'operator@test.local', is_admin: true, tier: 'enterprise' });
        const t = await newTenant(url, admin.api_key);
        const texts = ['Ana drinks oat milk flat whites', 'The deploy failed on an expired certificate', 'Ben goes bouldering on weekends'];
        expect(
          (
            await t.api(
              'POST',
              '/v1/memory/collections/notes/memories/bulk',
              texts.map((text) => ({ text })),
            )
          ).status,
        ).toBe(201);
        await fillGraph(app, t.id);
        // Through the graph the database holds (the float one), not the binary one configured, whose
        // order no index here serves.
        const sent: string[] = [];
        const query = app.db.query.bind(app.db);
        app.db.query = ((sql: string, params?: unknown[]) => (sent.push(sql), query(sql, params))) as typeof app.db.query;
        app.config.search.exactScanMax = 0;
        const res = await t.api('POST', '/v1/memory/collections/notes/search', { query: 'bouldering on weekends', mode: 'vector', limit: 1, min_score: 0 });
        app.db.query = query;
        expect(res.status).toBe(200);
        expect(res.body.results.map((r: { text: string }) => r.text)).toEqual([texts[2]]);
        const walk = sent.find((sql) => sql.includes('m.graphed'));
        expect(walk).toMatch(/order by m\.embedding <=> /);
        expect(walk).not.toContain('<~>');
      } finally {
        await server.close();
        await closeApp(app);
      }
    } finally {
      await fresh?.drop();
    }
  }, 60_000);

  it('a second process opening the same embedded data directory gets a clear error', async () => {
    const dir = tempDir();
    const app = await createApp(loadConfig({ ORGMEM_DATA_DIR: dir }), { embedder: hashEmbedder(512), log: silent });
    try {
      const bin = join(import.meta.dirname, '..', 'bin', 'orgmem.js');
      let stderr = '';
      try {
        execFileSync(process.execPath, [bin, 'migrate'], { env: { ...process.env, ORGMEM_DATA_DIR: dir, DATABASE_URL: '' }, stdio: 'pipe', encoding: 'utf8' });
      } catch (err) {
        stderr = String((err as { stderr: string }).stderr);
      }
      expect(stderr).toMatch(/in use by another orgmem process \(pid \d+\)/);
    } finally {
      await closeApp(app);
    }
    // Released on close: the directory opens again.
    const reopened = await createApp(loadConfig({ ORGMEM_DATA_DIR: dir }), { embedder: hashEmbedder(512), log: silent });
    await closeApp(reopened);
  }, 120_000);

  it.skipIf(!process.env.TEST_DATABASE_URL)('on PostgreSQL every connection makes SET LOCAL reach Citus workers, one opened before migrate too', async () => {
    const fresh = await freshDatabase(process.env.TEST_DATABASE_URL!);
    const db = openPostgres(fresh.url, 1);
    try {
      // Opened before any migration: a setting of the database would not reach it.
      await db.query('select 1');
      await closeApp(await createApp(loadConfig({ DATABASE_URL: fresh.url }), { embedder: hashEmbedder(512), log: silent }));
      const [row] = await db.query<{ p: string }>(`select current_setting('citus.propagate_set_commands') as p`);
      expect(row!.p).toBe('local');
    } finally {
      await db.close();
      await fresh.drop();
    }
  });

  it('an embedded database lets the event loop run between statements, so a job of many steps does not hold requests', async () => {
    const db = await openPglite('memory://');
    try {
      // A chain of statements, as a job's steps run: each holds the thread while it runs.
      let turns = 0;
      const timer = setInterval(() => turns++, 0);
      try {
        for (let i = 0; i < 20; i++) await db.query('select count(*)::int as n from generate_series(1, 20000)');
      } finally {
        clearInterval(timer);
      }
      expect(turns).toBeGreaterThanOrEqual(10);
    } finally {
      await db.close();
    }
  });
});
