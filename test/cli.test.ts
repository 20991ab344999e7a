import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { closeApp, createApp } from '../host/app.ts';
import { loadConfig } from '../src/core/config.ts';
import { toVectorLiteral } from '../src/ports/db/db.ts';
import { openPglite } from '../src/ports/db/pglite.ts';
import { hashEmbedder } from '../src/ports/embedder/hash.ts';
import { call } from './support/client.ts';
import { closedPort } from './support/closed-port.ts';
import { spawnServe } from './support/serve.ts';
import { startServer, type TestServer } from './support/server.ts';

const bin = join(import.meta.dirname, '..', 'bin', 'orgmem.js');

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'orgmem-cli-'));
  dirs.push(d);
  return d;
};

/**
 * The environment a user's shell would give: this process's, without the variables that choose
 * the data directory or the master key, so each test sets exactly the ones it means.
 */
function userEnv(env: Record<string, string>): Record<string, string> {
  const { ORGMEM_DATA_DIR: _d, XDG_DATA_HOME: _x, ORGMEM_MASTER_KEY: _k, ...rest } = process.env as Record<string, string>;
  return { ...rest, DATABASE_URL: '', ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'warn', ...env };
}

/** Runs `orgmem args` to its end, from `cwd`. */
function orgmem(args: string[], env: Record<string, string>, cwd: string) {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: userEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Starts `orgmem serve` and resolves once it listens, with everything it printed so far. */
const serve = (env: Record<string, string>, cwd: string) => spawnServe(userEnv({ ORGMEM_LOG_LEVEL: 'info', ...env }), cwd);

const KEY = /(mv_[A-Za-z0-9_-]{43})/;

describe('orgmem on an empty embedded database, started from another directory', () => {
  // No ORGMEM_DATA_DIR: the data goes to the per-user directory, never to the working directory.
  const home = tempDir();
  const cwd = tempDir();
  const dataDir = join(home, '.local', 'share', 'orgmem');

  it('keeps its data in the per-user directory, prints the admin key once, makes a new one on request, refuses a wrong master key', async () => {
    const first = serve({ HOME: home }, cwd);
    const { out, url } = await first.ready.catch(async (e) => (await first.stop(), Promise.reject(e)));
    const key = KEY.exec(out)?.[1];
    expect(key).toBeDefined();
    expect(out).toContain(`curl -H "Authorization: Bearer ${key}" ${url}/v1/memory/collections`);
    expect(out).toContain('orgmem admin create-key --tenant admin');
    // Not a terminal: the log is JSON lines, for collectors.
    expect(out).toMatch(new RegExp(`^\\{"level":30,.*"msg":"orgmem listening on ${url} \\(embedded data in ${dataDir}, `, 'm'));
    expect((await call(url, 'GET', '/v1/memory/admin/me', { key })).body).toMatchObject({ name: 'admin', is_admin: true });
    await first.stop();
    expect(readdirSync(cwd)).toEqual([]);
    expect(readdirSync(dataDir).sort()).toEqual(['files', 'master.key', 'pgdata']);

    // XDG_DATA_HOME names the same directory another way.
    const made = await orgmem(
      ['admin', 'create-key', '--tenant', 'admin', '--label', 'replacement'],
      { HOME: tempDir(), XDG_DATA_HOME: join(home, '.local', 'share') },
      cwd,
    );
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`Created admin API key 'replacement' for tenant admin <admin@localhost>.`);
    const replacement = KEY.exec(made.stdout)?.[1];
    expect(replacement).toBeDefined();
    expect(replacement).not.toBe(key);

    const second = serve({ HOME: home }, cwd);
    const again = await second.ready.catch(async (e) => (await second.stop(), Promise.reject(e)));
    expect(again.out).not.toMatch(/mv_/);
    for (const k of [key, replacement]) {
      expect((await call(again.url, 'GET', '/v1/memory/admin/me', { key: k })).body).toMatchObject({ name: 'admin' });
    }
    await second.stop();

    const wrong = await orgmem(['migrate'], { HOME: home, ORGMEM_MASTER_KEY: randomBytes(32).toString('base64') }, cwd);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('The master key (ORGMEM_MASTER_KEY) cannot decrypt the secrets stored in this database');
    expect(wrong.stderr).toContain(`with ORGMEM_MASTER_KEY unset, in ${join(dataDir, 'master.key')}`);
    expect(wrong.stdout).not.toContain('Migrations applied');
    expect(readdirSync(cwd)).toEqual([]);
  }, 180_000);

  it('admin create-tenant takes the tiers ORGMEM_TIERS adds, and create-key finds a tenant by email', async () => {
    // The directory above, already made: a new one costs PGlite's initdb again.
    const env = {
      HOME: home,
      ORGMEM_TIERS: JSON.stringify({ team: { rate_limit_per_minute: 100, max_memories: 5, max_collections: 2, max_storage_bytes: null } }),
    };
    const created = await orgmem(['admin', 'create-tenant', '--name', 'Acme', '--email', 'Ops@Acme.test', '--tier', 'team'], env, cwd);
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/^Created tenant Acme \([0-9a-f-]{36}, tier team\)\.\nAPI key \(shown only now\): mv_/);
    const key = await orgmem(['admin', 'create-key', '--tenant', 'ops@acme.test', '--read-only'], env, cwd);
    expect(key.stdout).toMatch(/^Created admin API key 'cli' \(read-only\) for tenant Acme <Ops@Acme.test>\.\nAPI key \(shown only now\): mv_/);
    const missing = await orgmem(['admin', 'create-key', '--tenant', 'nobody'], env, cwd);
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: "orgmem: No tenant has the name, email or id 'nobody'\n" });
  }, 120_000);
  it('admin commands go through the orgmem serve that holds the data directory, found in its server.json', async () => {
    const env = { HOME: home };
    const running = serve(env, cwd);
    const { url } = await running.ready.catch(async (e) => (await running.stop(), Promise.reject(e)));
    const file = join(dataDir, 'server.json');
    try {
      // Where it listens, for this machine only.
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const server = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number; secret: string };
      expect(server).toEqual({ url, pid: running.pid, secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });

      const made = await orgmem(['admin', 'create-key', '--tenant', 'admin', '--label', 'while-serving'], env, cwd);
      expect(made.stderr).toBe('');
      expect(made.stdout).toMatch(/^Created admin API key 'while-serving' for tenant admin <admin@localhost>\.\nAPI key \(shown only now\): mv_/);
      expect((await call(url, 'GET', '/v1/memory/admin/me', { key: KEY.exec(made.stdout)![1] })).body).toMatchObject({ name: 'admin', is_admin: true });

      // The same rules as on the data itself: a name two tenants share is refused with both listed, to name one by email.
      const twin = await orgmem(['admin', 'create-tenant', '--name', 'admin', '--email', 'twin@example.com'], env, cwd);
      expect(twin.stderr).toBe('');
      expect(twin.stdout).toMatch(/^Created tenant admin \([0-9a-f-]{36}, tier free\)\.\nAPI key \(shown only now\): mv_/);
      const ambiguous = await orgmem(['admin', 'create-key', '--tenant', 'admin'], env, cwd);
      expect(ambiguous).toMatchObject({ code: 1, stdout: '' });
      expect(ambiguous.stderr).toMatch(
        /^orgmem: Several tenants match 'admin'; name one by email or id:\n {2}admin <admin@localhost> [0-9a-f-]{36}\n {2}admin <twin@example.com> [0-9a-f-]{36}\n$/,
      );
      const missing = await orgmem(['admin', 'create-key', '--tenant', 'nobody'], env, cwd);
      expect(missing).toMatchObject({ code: 1, stdout: '', stderr: "orgmem: No tenant has the name, email or id 'nobody'\n" });
      const taken = await orgmem(['admin', 'create-tenant', '--name', 'again', '--email', 'TWIN@example.com'], env, cwd);
      expect(taken).toMatchObject({ code: 1, stdout: '', stderr: 'orgmem: A tenant with this email already exists\n' });
      // A tier this shell's ORGMEM_TIERS has but the server's configuration does not: the server's refusal, as a usage error.
      const team = JSON.stringify({ team: { rate_limit_per_minute: 100, max_memories: 5, max_collections: 2, max_storage_bytes: null } });
      const tier = await orgmem(['admin', 'create-tenant', '--name', 't', '--email', 't@example.com', '--tier', 'team'], { ...env, ORGMEM_TIERS: team }, cwd);
      expect(tier).toMatchObject({ code: 2, stdout: '' });
      expect(tier.stderr).toMatch(/^orgmem: --tier: Invalid option: expected one of "free"\|"pro"\|"enterprise"\n\nUsage: orgmem admin create-tenant/);

      // The endpoints answer this run's secret only.
      for (const path of ['/v1/memory/_internal/keys', '/v1/memory/_internal/tenants']) {
        const tries: Array<Record<string, string>> = [{}, { 'x-local-admin-secret': 'x'.repeat(43) }, { 'x-local-admin-secret': server.secret.slice(1) }];
        for (const headers of tries) {
          const res = await call(url, 'POST', path, { headers, body: { tenant: 'admin@localhost', name: 'n', email: 'n@example.com' } });
          expect(res.status).toBe(401);
          expect(res.body.detail).toContain('X-Local-Admin-Secret');
          expect(res.body.api_key).toBeUndefined();
        }
      }
      const headers = { 'x-local-admin-secret': server.secret };
      const createKey = (body: unknown) => call(url, 'POST', '/v1/memory/_internal/keys', { headers, body });
      expect((await createKey({ tenant: 'nobody', label: 'x' })).status).toBe(404);
      const conflict = await createKey({ tenant: 'admin', label: 'x' });
      expect(conflict.status).toBe(409);
      expect(conflict.body.detail).toContain('<twin@example.com>');
      for (const body of [
        {},
        { tenant: '', label: 'x' },
        { tenant: 'admin@localhost', label: '' },
        { tenant: 'admin@localhost', label: 'x', read_only: 'yes' },
      ]) {
        expect((await createKey(body)).status, JSON.stringify(body)).toBe(422);
      }
      const created = await createKey({ tenant: 'twin@example.com', label: 'direct', read_only: true });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        tenant: { name: 'admin', email: 'twin@example.com' },
        label: 'direct',
        read_only: true,
        api_key: expect.stringMatching(KEY),
      });
      const tenant = await call(url, 'POST', '/v1/memory/_internal/tenants', { headers, body: { name: 'Beta', email: 'beta@example.com', tier: 'gold' } });
      expect(tenant.status).toBe(422);
      expect(tenant.body.errors).toEqual([{ path: 'tier', message: expect.stringContaining('"free"|"pro"|"enterprise"') }]);

      // A server file whose secret the server does not hold: the command says to restart the server.
      writeFileSync(file, JSON.stringify({ ...server, secret: 'x'.repeat(43) }));
      const refused = await orgmem(['admin', 'create-key', '--tenant', 'admin@localhost'], env, cwd);
      writeFileSync(file, JSON.stringify(server));
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toContain(`orgmem: The orgmem serve at ${url} (pid ${running.pid}) refused the secret in ${file} (401: `);
      expect(refused.stderr).toContain('Fix: restart that server (it writes a new server.json), then run this command again.');
    } finally {
      await running.stop();
    }
    expect(existsSync(file)).toBe(false);
  }, 180_000);

  it('says what to do when neither the data nor a server holding it can be reached', async () => {
    const elsewhere = tempDir();
    const nowhere = await orgmem(['admin', 'create-key', '--tenant', 'admin'], { HOME: elsewhere }, cwd);
    expect(nowhere).toMatchObject({ code: 1, stdout: '' });
    expect(nowhere.stderr).toBe(
      `orgmem: There is no orgmem data in ${join(elsewhere, '.local', 'share', 'orgmem')} (the default data directory). Fix: run this command ` +
        'with ORGMEM_DATA_DIR set to the data directory of your orgmem serve (its log says "embedded data in ..."), or with its DATABASE_URL.\n',
    );
    expect(readdirSync(elsewhere)).toEqual([]);

    // The directory held by a live process (this test's) that is not a server: no server.json of its own.
    const lock = join(dataDir, 'orgmem.lock');
    const file = join(dataDir, 'server.json');
    writeFileSync(lock, String(process.pid));
    try {
      const held = await orgmem(['admin', 'create-key', '--tenant', 'admin@localhost'], { HOME: home }, cwd);
      expect(held).toMatchObject({ code: 1, stdout: '' });
      expect(held.stderr).toContain(`The data directory ${dataDir} is in use by another orgmem process (pid ${process.pid}), which is not an orgmem serve`);
      expect(held.stderr).toContain(`otherwise stop that process (kill ${process.pid}) and run this command again.`);
      // A server file left by another process than the one holding the directory is not believed.
      writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:1', pid: process.pid + 1, secret: 'x'.repeat(43) }), { mode: 0o600 });
      expect((await orgmem(['admin', 'create-key', '--tenant', 'admin@localhost'], { HOME: home }, cwd)).stderr).toBe(held.stderr);
      // Its own, at an address where nothing answers.
      const port = await closedPort();
      writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid, secret: 'x'.repeat(43) }), { mode: 0o600 });
      const silent = await orgmem(['admin', 'create-key', '--tenant', 'admin@localhost'], { HOME: home }, cwd);
      expect(silent).toMatchObject({ code: 1, stdout: '' });
      expect(silent.stderr).toContain(
        `The orgmem serve that holds the data directory ${dataDir} (pid ${process.pid}) does not answer at http://127.0.0.1:${port} (ECONNREFUSED). ` +
          `Fix: stop it (kill ${process.pid}) and run this command again`,
      );
    } finally {
      rmSync(lock, { force: true });
      rmSync(file, { force: true });
    }
  }, 120_000);
});

describe('orgmem graph-tenants', () => {
  it('says which tenants are out of place in the vector graph, changes nothing with --dry-run, then takes the small ones out', async () => {
    const dir = tempDir();
    const cwd = tempDir();
    // A tenant of three memories in the graph, as a database from before ORGMEM_GRAPH_FROM holds every tenant.
    const app = await createApp(loadConfig({ ORGMEM_DATA_DIR: dir, ORGMEM_EMBEDDER: 'hash' }), { embedder: hashEmbedder(512), log: pino({ level: 'silent' }) });
    const tenant = '01900000-0000-7000-8000-00000000cccc';
    try {
      await app.db.query(`insert into tenants (id, name, email) values ($1, 'g', 'g@example.com')`, [tenant]);
      // Its count kept by hand, as the service keeps it with every write.
      await app.db.query(`insert into collections (tenant_id, name, memory_count) values ($1, 'c', 3)`, [tenant]);
      const vectors = await hashEmbedder(512).embed(['one', 'two', 'three']);
      for (const v of vectors) {
        await app.db.query(`insert into memories (tenant_id, id, collection, text, embedding) values ($1, gen_random_uuid(), 'c', 'a note', $2::vector)`, [
          tenant,
          toVectorLiteral(v),
        ]);
      }
      await app.db.query(`insert into graph_tenants (tenant_id, state) values ($1, 'ready')`, [tenant]);
    } finally {
      await closeApp(app);
    }
    const held = async () => {
      const db = await openPglite(dir);
      try {
        const [r] = await db.query<{ graphed: number; marked: boolean }>(
          `select count(*) filter (where graphed)::int as graphed, exists (select 1 from graph_tenants where tenant_id = $1) as marked from memories where tenant_id = $1`,
          [tenant],
        );
        return r;
      } finally {
        await db.close();
      }
    };

    const dry = await orgmem(['graph-tenants', '--dry-run'], { ORGMEM_DATA_DIR: dir }, cwd);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toContain('1 tenants to take out of the graph (fewer than 10000 memories each, 3 in all)');
    expect(dry.stdout).toContain('0 tenants to add to it (10000 memories or more each, 0 in all)');
    expect(await held()).toEqual({ graphed: 3, marked: true });

    const run = await orgmem(['graph-tenants'], { ORGMEM_DATA_DIR: dir }, cwd);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/Done in \d+ s: 1 tenants out of the graph \(3 memories\); 0 added \(0 memories\)\./);
    expect(run.stdout).toContain('REINDEX INDEX CONCURRENTLY memories_embedding');
    expect(await held()).toEqual({ graphed: 0, marked: false });
  }, 120_000);
});

describe('arguments', () => {
  // On PostgreSQL runs the commands get a real database too, to show that they leave it alone.
  let server: TestServer | undefined;
  const snapshot = async () =>
    server
      ? server.app.db.query(
          `select (select count(*)::int from tenants) as tenants, (select count(*)::int from api_keys) as keys,
                  (select count(*)::int from schema_migrations) as migrations, (select json_agg(key order by key) from settings) as settings`,
        )
      : null;
  beforeAll(async () => {
    if (process.env.TEST_DATABASE_URL) server = await startServer({}, { worker: false });
  });
  afterAll(() => server?.close());

  /** Runs every command at once, each in empty directories, and checks that none of them wrote anything. */
  async function runAll(commands: string[][]) {
    const home = tempDir();
    const dataDir = tempDir();
    const cwd = tempDir();
    const env = { HOME: home, ORGMEM_DATA_DIR: dataDir, DATABASE_URL: server?.app.config.databaseUrl ?? '' };
    const before = await snapshot();
    const results = await Promise.all(commands.map((args) => orgmem(args, env, cwd)));
    expect([readdirSync(home), readdirSync(dataDir), readdirSync(cwd)]).toEqual([[], [], []]);
    expect(await snapshot()).toEqual(before);
    return results;
  }

  it('--help for the program and every command prints its usage, exits 0 and runs nothing', async () => {
    const cases: Array<[string[], string]> = [
      [['--help'], 'Usage: orgmem <command>'],
      [['-h'], 'Usage: orgmem <command>'],
      [['help'], 'Usage: orgmem <command>'],
      [['serve', '--help'], 'Usage: orgmem serve'],
      [['serve', '--port', '1', '-h'], 'Usage: orgmem serve'],
      [['worker', '--help'], 'Usage: orgmem worker'],
      [['inbound-smtp', '--help'], 'Usage: orgmem inbound-smtp'],
      [['migrate', '--help'], 'Usage: orgmem migrate'],
      [['mcp', '--help'], 'Usage: orgmem mcp'],
      [['reembed', '--help'], 'Usage: orgmem reembed'],
      [['graph-tenants', '--help'], 'Usage: orgmem graph-tenants'],
      [['help', 'reembed'], 'Usage: orgmem reembed'],
      [['admin', '--help'], 'Usage: orgmem admin <command>'],
      [['admin', 'create-tenant', '--help'], 'Usage: orgmem admin create-tenant'],
      [['admin', 'create-key', '--help'], 'Usage: orgmem admin create-key'],
    ];
    const results = await runAll(cases.map(([args]) => args));
    results.forEach((r, i) => {
      const [args, usage] = cases[i]!;
      expect({ args, code: r.code, stderr: r.stderr, first: r.stdout.split('\n')[0] }).toEqual({
        args,
        code: 0,
        stderr: '',
        first: expect.stringContaining(usage),
      });
    });
    expect(results[0]!.stdout).toMatch(/serve[\s\S]*worker[\s\S]*inbound-smtp[\s\S]*mcp[\s\S]*migrate[\s\S]*reembed[\s\S]*admin/);
    expect(results[0]!.stdout).toContain('~/.local/share/orgmem');
    expect(results.at(-1)!.stdout).toContain('orgmem admin create-key --tenant admin');
  }, 120_000);

  it('--version and -v print the version of package.json, exit 0 and run nothing; the help lists them', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    const [long, short, help] = await runAll([['--version'], ['-v'], ['help']]);
    for (const r of [long, short]) expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(help!.stdout).toContain("  -v, --version     print orgmem's version and exit\n");
  }, 60_000);

  it('unknown commands and options, missing or invalid values are errors with the usage, and run nothing', async () => {
    const cases: Array<[string[], string, string]> = [
      [[], 'a command is needed', 'Usage: orgmem <command>'],
      [['bogus'], "unknown command 'bogus'", 'Usage: orgmem <command>'],
      [['--bogus'], "unknown option '--bogus'", 'Usage: orgmem <command>'],
      [['serve', '--bogus'], "unknown option '--bogus'", 'Usage: orgmem serve'],
      [['serve', '--port', 'eighty'], "--port must be a port number (0-65535), not 'eighty'", 'Usage: orgmem serve'],
      [['serve', '--port'], "Option '--port <value>' argument missing", 'Usage: orgmem serve'],
      [['reembed', '--all'], "unknown option '--all'", 'Usage: orgmem reembed'],
      [['graph-tenants', '--all'], "unknown option '--all'", 'Usage: orgmem graph-tenants'],
      [['serve', '--version'], "unknown option '--version'", 'Usage: orgmem serve'],
      [['migrate', 'now'], "Unexpected argument 'now'", 'Usage: orgmem migrate'],
      [['admin'], "'admin' needs a command", 'Usage: orgmem admin <command>'],
      [['admin', 'delete-tenant'], "unknown command 'admin delete-tenant'", 'Usage: orgmem admin <command>'],
      [['admin', 'create-tenant', '--email', 'a@example.com'], 'create-tenant needs --name and --email', 'Usage: orgmem admin create-tenant'],
      [['admin', 'create-tenant', '--name', 'a', '--email', 'not-an-email'], '--email: Invalid email address', 'Usage: orgmem admin create-tenant'],
      [
        ['admin', 'create-tenant', '--name', 'a', '--email', 'a@example.com', '--tier', 'gold'],
        '--tier: Invalid option: expected one of "free"|"pro"|"enterprise"',
        'Usage: orgmem admin create-tenant',
      ],
      [['admin', 'create-tenant', '--name', '', '--email', 'a@example.com'], 'create-tenant needs --name and --email', 'Usage: orgmem admin create-tenant'],
      [['admin', 'create-key'], 'create-key needs --tenant', 'Usage: orgmem admin create-key'],
      [['admin', 'create-key', '--tenant', 'admin', '--label', 'x'.repeat(101)], '--label: Too big', 'Usage: orgmem admin create-key'],
    ];
    const results = await runAll(cases.map(([args]) => args));
    results.forEach((r, i) => {
      const [args, message, usage] = cases[i]!;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr.startsWith(`orgmem: ${message}`), `${args.join(' ')}: ${r.stderr}`).toBe(true);
      expect(r.stderr).toContain(`\n\n${usage}`);
    });
  }, 120_000);

  it.runIf(process.env.TEST_DATABASE_URL)(
    'serve on an empty PostgreSQL database says how to create the first tenant, and creates none',
    async () => {
      await server!.app.db.query('delete from tenants');
      const started = serve({ DATABASE_URL: server!.app.config.databaseUrl!, ORGMEM_DATA_DIR: tempDir() }, tempDir());
      const { out } = await started.ready.catch(async (e) => (await started.stop(), Promise.reject(e)));
      await started.stop();
      expect(out).toContain('This database has no tenants yet');
      expect(out).toContain('orgmem admin create-tenant --name admin --email you@example.com --admin --tier enterprise');
      expect(out).not.toMatch(/mv_/);
      const [row] = await server!.app.db.query<{ n: number }>('select count(*)::int as n from tenants');
      expect(row!.n).toBe(0);
    },
    120_000,
  );
});
