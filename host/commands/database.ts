import { HELP, cliLog, openApp, stopApp, type Command } from './command.ts';

/** A line of a long-running command's progress, with the time it was said. */
const say = (line: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

export const migrateCommand: Command = {
  usage: `Usage: orgmem migrate

Applies the database migrations that have not run yet and exits. Every other command migrates
on start as well; run this one first when several processes share a PostgreSQL database.

Options:
${HELP}`,
  async run() {
    await stopApp(await openApp());
    process.stdout.write('Migrations applied.\n');
  },
};

export const reembedCommand: Command = {
  usage: `Usage: orgmem reembed

Re-embeds every memory with the configured embedder, after changing the embedder or its
dimension (ORGMEM_EMBEDDER, ORGMEM_EMBEDDINGS_*). Stop the service first.

Options:
${HELP}`,
  async run() {
    const [{ loadConfig }, { openPglite }, { openPostgres }, { makeEmbedder }, { reembed }] = await Promise.all([
      import('../../src/core/config.ts'),
      import('../../src/ports/db/pglite.ts'),
      import('../../src/ports/db/postgres.ts'),
      import('../../src/ports/embedder/index.ts'),
      import('../../src/maintenance/reembed.ts'),
    ]);
    const config = loadConfig();
    const db = config.databaseUrl ? openPostgres(config.databaseUrl, 2) : await openPglite(config.dataDir);
    try {
      const { from, to, memories } = await reembed(db, makeEmbedder(config.embedder), await cliLog(config.logLevel));
      process.stdout.write(`Re-embedded ${memories} memories (${from} -> ${to} dimensions).\n`);
    } finally {
      await db.close();
    }
  },
};

export const vectorStorageCommand: Command = {
  usage: `Usage: orgmem vector-storage [--dry-run]

Stores and indexes the embeddings as ORGMEM_VECTOR_STORAGE says (vector, halfvec, binary-halfvec
or binary-vector), with the graph's parameters ORGMEM_VECTOR_M and ORGMEM_VECTOR_EF_CONSTRUCTION
(docs/vectors.md). Says first what it will do and how long it should take (the
steps timed on a sample of the table, scaled to its size), then does it, reporting the index
build's progress. The index is built concurrently while the old one serves searches, then
swapped in. A change of the column's type (vector <-> halfvec) rewrites the table first: reads
and writes wait for that step, and until the new index is ready searches rank exactly (slower).

Options:
      --dry-run     only say what would be done and how long it should take
${HELP}`,
  options: { 'dry-run': { type: 'boolean' } },
  async run(values) {
    const [{ loadConfig }, { openPglite }, { openPostgres }, { planStorage, applyStorage, described }] = await Promise.all([
      import('../../src/core/config.ts'),
      import('../../src/ports/db/pglite.ts'),
      import('../../src/ports/db/postgres.ts'),
      import('../../src/maintenance/vector-storage.ts'),
    ]);
    const config = loadConfig();
    const db = config.databaseUrl ? openPostgres(config.databaseUrl, 2) : await openPglite(config.dataDir);
    try {
      const plan = await planStorage(db, config.search.vectorIndex);
      if (!plan.build) {
        say(`The embeddings are already stored as ${described(plan.to, plan.graph)}: nothing to do.`);
        return;
      }
      const minutes = (s: number) => (s < 90 ? `${s} s` : `${Math.round(s / 60)} min`);
      const from = plan.from && plan.fromGraph ? described(plan.from, plan.fromGraph) : 'embeddings without a vector index';
      say(`${plan.memories} memories (${plan.graphed} of them in the graph), stored as ${from}, to become ${described(plan.to, plan.graph)}:`);
      if (plan.rewrite) say(`  rewrite the table with the new column type: about ${minutes(plan.estimate.rewrite_s)} (reads and writes wait)`);
      say(`  build the index concurrently, then swap it in: about ${minutes(plan.estimate.build_s)} (searches go on)`);
      if (values['dry-run']) return;
      const started = performance.now();
      await applyStorage(db, plan, (p, elapsed) => {
        const share = p.total > 0 ? ` ${Math.round((100 * p.done) / p.total)}% (${p.done}/${p.total} ${p.unit})` : '';
        say(`  ${p.phase}${share}, ${minutes(Math.round(elapsed))} so far`);
      });
      say(`Done in ${minutes(Math.round((performance.now() - started) / 1000))}: the embeddings are stored as ${described(plan.to, plan.graph)}.`);
    } finally {
      await db.close();
    }
  },
};

export const graphTenantsCommand: Command = {
  usage: `Usage: orgmem graph-tenants [--dry-run]

Puts each tenant where ORGMEM_GRAPH_FROM says (docs/search.md, "Which tenants the graph holds"):
takes the tenants holding fewer memories out of the vector graph, so their searches read
exactly and their writes skip the graph (a database from before the setting holds every tenant
in it, and a raised setting leaves tenants in it), and adds those holding as many or more that
are not in it (a lowered setting adds them only at their next write). Says first which, then
does it while the service runs.

Options:
      --dry-run     only say which tenants would leave or enter the graph
${HELP}`,
  options: { 'dry-run': { type: 'boolean' } },
  async run(values) {
    const { misplacedTenants, leaveGraph, fillGraph } = await import('../../src/services/memory/graph-tenants.ts');
    const app = await openApp();
    try {
      const from = app.config.search.graphFrom;
      const { leave, enter } = await misplacedTenants(app.db, from);
      const memories = (list: Array<{ memories: number }>) => list.reduce((n, t) => n + t.memories, 0);
      say(`${leave.length} tenants to take out of the graph (fewer than ${from} memories each, ${memories(leave)} in all)`);
      say(`${enter.length} tenants to add to it (${from} memories or more each, ${memories(enter)} in all)`);
      if (values['dry-run']) return;
      const started = performance.now();
      const done = { left: 0, out: 0, kept: 0, entered: 0, filled: 0 };
      for (const t of leave) {
        const rows = await leaveGraph(app.db, t.tenantId, from);
        if (rows === null) done.kept++;
        else {
          done.left++;
          done.out += rows;
        }
      }
      for (const t of enter) {
        done.filled += await fillGraph(app, t.tenantId);
        done.entered++;
      }
      const seconds = Math.round((performance.now() - started) / 1000);
      say(
        `Done in ${seconds} s: ${done.left} tenants out of the graph (${done.out} memories)${done.kept ? `, ${done.kept} kept (grown or filling since)` : ''}; ${done.entered} added (${done.filled} memories).`,
      );
      // The index keeps the nodes of the rows taken out until rebuilt or vacuumed; a rebuild is the quick way (docs/search.md).
      if (done.out) say('The vector index keeps their nodes until rebuilt: REINDEX INDEX CONCURRENTLY memories_embedding, then VACUUM memories.');
    } finally {
      await stopApp(app);
    }
  },
};
