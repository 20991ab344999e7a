import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { LINEAR_FAKE_TOKEN, startLinearFake } from './fakes/providers/linear.ts';
import { startReceiver } from './fakes/webhook-receiver.ts';
import { clientProject } from './support/client-project.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { allBlocks, DOC_PAGES, type DocBlock } from './support/docs.ts';
import { pdf } from './support/documents.ts';
import { ROOT } from './support/mcp.ts';
import { startForger } from './support/oidc-forger.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

/**
 * Every code block of the README and docs/ is run here against one real server, or says why
 * not: a block marked `<!-- snippet: NAME -->` is run by RUNS[NAME] (shell in bash with `KEY`
 * and the server's address filled in, TypeScript compiled against `orgmem/trpc` and run,
 * JavaScript run with Node) and its answers checked; `<!-- mcp-config: NAME -->` blocks are run
 * by test/mcp-readme.test.ts; `<!-- not-run: REASON -->` blocks say why they are not. The links
 * between the pages are checked too.
 */

const SECRET = 'inbound-secret-for-the-docs-snippets';
const DOMAIN = 'drop.test';

let server: TestServer;
let llm: FakeLlm;
let linear: ProviderFake;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'orgmem-docs-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  llm = await startFakeLlm();
  playMemoryModel(llm);
  linear = await startLinearFake();
  for (const title of ['Checkout fails on Safari', 'Add dark mode', 'Export as CSV']) linear.put({ title, body: `${title}: details.` });
  server = await startServer({
    ORGMEM_EMBEDDER: 'hash',
    ORGMEM_INBOUND_SECRET: SECRET,
    ORGMEM_EMAIL_DOMAIN: DOMAIN,
    ORGMEM_LINEAR_API_URL: linear.url,
  });
});

afterAll(async () => {
  await server?.close();
  await Promise.all([llm?.close(), linear?.close()]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A process run to its end without blocking this one: the server under test answers it from here. */
function run(command: string, args: string[], opts: { cwd: string; env: Record<string, string | undefined>; input?: string }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env as NodeJS.ProcessEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

const expectSuccess = (ran: Ran) => expect(ran.status, `exit ${ran.status}\n${ran.stdout}\n${ran.stderr}`).toBe(0);

/** The docs' address of the service, made this server's. */
const fill = (code: string) => code.replaceAll('http://127.0.0.1:8080', server.url);

// Each curl fails the block on an HTTP error (its body still printed) and ends its answer with a
// newline, so the answers of a block are its output's lines.
const PRELUDE = 'set -euo pipefail\ncurl() { command curl --fail-with-body -sS "$@" || return; echo; }\n';

/** A shell block in bash from a directory of its own, with KEY and the block's other variables. */
const sh = (block: DocBlock, vars: Record<string, string>, cwd = tempDir()) =>
  run('bash', ['-c', PRELUDE + fill(block.code)], { cwd, env: { PATH: process.env.PATH, HOME: cwd, ...vars } });

const answers = (ran: Ran) =>
  ran.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

const tenant = () => newTenant(server.url, server.adminKey);

/** A tenant whose LLM endpoint is the fake (as `PUT /v1/memory/extraction/config` sets one). */
async function tenantWithLlm(): Promise<Tenant> {
  const t = await tenant();
  const put = await t.api('PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: llm.url, model: 'fake-model', api_key: 'sk-fake' });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return t;
}

async function store(t: Tenant, collection: string, text: string, fields: Record<string, unknown> = {}): Promise<string> {
  const res = await t.api('POST', `/v1/memory/collections/${collection}/memories`, { text, ...fields });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** The TypeScript and JavaScript snippets in one client project, compiled once. */
let project: ReturnType<typeof clientProject> | undefined;
function snippetProject() {
  if (project) return project;
  const files: Record<string, string> = {};
  for (const b of allBlocks()) {
    if (b.marker?.kind !== 'snippet') continue;
    if (b.lang === 'ts') files[`src/${b.marker.value}.ts`] = b.code;
    if (b.lang === 'js') files[`${b.marker.value}.mjs`] = b.code;
  }
  project = clientProject(files);
  dirs.push(project.dir);
  const compiled = project.compile();
  expect(compiled.output).toBe('');
  expect(compiled.status).toBe(0);
  return project;
}

const node = (file: string, key: string) => run(process.execPath, [file], { cwd: snippetProject().dir, env: { ...process.env, KEY: key } });
/** A compiled TypeScript snippet, run; its address made this server's. */
function runTs(block: DocBlock, key: string) {
  const p = snippetProject();
  const file = join(p.dir, 'dist', `${block.marker!.value}.js`);
  writeFileSync(file, fill(readFileSync(file, 'utf8')));
  return node(file, key);
}
function runJs(block: DocBlock, key: string) {
  const file = join(snippetProject().dir, `${block.marker!.value}.mjs`);
  writeFileSync(file, fill(block.code));
  return node(file, key);
}

const usage = async (words: string[]) => {
  const ran = await run(process.execPath, [join(ROOT, 'bin', 'orgmem.js'), ...words, '--help'], { cwd: ROOT, env: process.env });
  expectSuccess(ran);
  return ran.stdout;
};
/** Names listed under a usage's `Commands:` heading, or its indented `name   text` lines after the first. */
const listed = (help: string) => [...help.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((m) => m[1]!);

const RUNS: Record<string, (block: DocBlock) => Promise<void>> = {
  // README.md
  async rest(block) {
    const t = await tenant();
    const cwd = tempDir();
    writeFileSync(join(cwd, 'report.pdf'), await pdf(['Quarterly report', 'Revenue grew by twelve percent.']));
    writeFileSync(join(cwd, 'notes.md'), '# Notes\n\nThe offsite is in Lisbon.\n');
    const ran = await sh(block, { KEY: t.key }, cwd);
    expectSuccess(ran);
    const [memory, search, drop] = answers(ran);
    expect(memory).toMatchObject({ text: 'Ana prefers oat milk', category: 'preference', importance: 0.8 });
    expect(search.results[0]).toMatchObject({ id: memory.id, text: 'Ana prefers oat milk' });
    expect(drop).toMatchObject({ stored: 2, failed: 0 });
  },
  async trpc(block) {
    const t = await tenant();
    const ran = await runTs(block, t.key);
    expectSuccess(ran);
    const [id, ...text] = ran.stdout.trim().split(' ');
    expect(text.join(' ')).toBe('Ana prefers oat milk');
    expect((await t.api('GET', `/v1/memory/collections/notes/memories/${id}`)).status).toBe(200);
  },
  async proxy(block) {
    const t = await tenantWithLlm();
    // What the snippet recalls from: its collection and end user.
    await store(t, 'chat', 'Ana rides a road bike', { container_tag: 'user-42' });
    await store(t, 'chat', 'Ben rides a road bike too', { container_tag: 'user-7' });
    const ran = await runJs(block, t.key);
    expectSuccess(ran);
    expect(ran.stdout).toMatch(/^OK\n/);
    expect(ran.stdout).toContain("text: 'Ana rides a road bike'");
    expect(ran.stdout).not.toContain('Ben');
    expect(ran.stdout).toContain('stored: true');
    const proxied = llm.calls.filter((c) => c.name === 'plain' && c.user.includes('Porto'));
    expect(proxied).toHaveLength(1);
  },
  async 'npx-help'(block) {
    const ran = await run('bash', ['-c', block.code], { cwd: ROOT, env: process.env });
    expectSuccess(ran);
    expect(ran.stdout).toMatch(/^Usage: orgmem <command>/);
  },

  // docs/sign-in.md
  async 'identity-config'(block) {
    const t = await tenant();
    const idp = await startForger();
    try {
      const ran = await sh(block, { KEY: t.key, ISSUER: idp.issuer, CLIENT_ID: idp.clientId, CLIENT_SECRET: 'a-secret' });
      expectSuccess(ran);
      const [config, started] = ran.stdout.split('\n').filter((l) => l.trim());
      expect(JSON.parse(config!)).toMatchObject({ configured: true, issuer: idp.issuer, client_secret_set: true, allowed_domains: ['example.com'] });
      expect(config).not.toContain('a-secret');
      expect(started).toMatch(new RegExp(`^302 ${idp.issuer}/authorize\\?.*code_challenge_method=S256`));
    } finally {
      await idp.close();
    }
  },

  // docs/people.md
  async 'people-setup'(block) {
    const t = await tenant();
    const ran = await sh(block, { KEY: t.key });
    expectSuccess(ran);
    const [team, owner, member, collection] = answers(ran);
    expect(team).toMatchObject({ name: 'Payments', provider_group: 'payments-eng', members: [] });
    expect(owner).toMatchObject({ email: 'ana@example.com', role: 'owner', state: 'invited' });
    expect(member).toMatchObject({ email: 'ben@example.com', role: 'member', state: 'invited' });
    expect(collection).toMatchObject({ name: 'payments-runbooks', scope: 'team', teams: [team.id], owner: null });
  },

  // docs/consolidation.md
  async consolidate(block) {
    const t = await tenant();
    for (const text of ['The release train leaves every Tuesday.', 'The release train leaves every Tuesday!', 'Ana owns the billing runbook.'])
      await store(t, 'notes', text);
    const ran = await sh(block, { KEY: t.key });
    expectSuccess(ran);
    const [open, applied] = answers(ran);
    expect(open).toMatchObject({ state: 'open', changes: [{ kind: 'merge', state: 'proposed' }] });
    expect(applied).toMatchObject({ state: 'reviewed', counts: { applied: 1 } });
    expect((await t.api('GET', '/v1/memory/collections/notes/memories')).body).toHaveLength(2);
  },

  // docs/access.md
  async 'webhook-verify'(block) {
    const receiver = await startReceiver();
    try {
      const t = await tenant();
      const { secret } = (await t.api('PUT', '/v1/memory/webhook/config', { url: receiver.url })).body;
      await store(t, 'notes', 'Signed and delivered');
      const [delivery] = await receiver.waitFor(1);
      const file = join(tempDir(), 'verify.mjs');
      writeFileSync(file, block.code);
      const { verified } = (await import(pathToFileURL(file).href)) as { verified: (body: Buffer, signature: unknown, secret: string) => boolean };
      const body = Buffer.from(delivery!.body);
      const signature = delivery!.headers['x-service-signature'];
      expect(verified(body, signature, secret)).toBe(true);
      expect(verified(Buffer.from(delivery!.body.replace('Signed', 'Forged')), signature, secret)).toBe(false);
      expect(verified(body, signature, 'whsec_another')).toBe(false);
      expect(verified(body, undefined, secret)).toBe(false);
      expect(verified(body, 'sha256=00', secret)).toBe(false);
    } finally {
      await receiver.close();
    }
  },

  // docs/commands.md
  async 'cli-synopsis'(block) {
    const lines = block.code.split('\n');
    // `orgmem admin create-key --tenant T ...` is the command `admin create-key`: the words before the first option
    // or argument (`orgmem import FILE`).
    const commandOf = (line: string) => {
      const words = line.split(' ').slice(1);
      const options = words.findIndex((w) => /^([[-]|[A-Z]+$)/.test(w));
      return options < 0 ? words : words.slice(0, options);
    };
    for (const line of lines) expect((await usage(commandOf(line))).split('\n')[0]).toBe(`Usage: ${line}`);
    // Every command of `orgmem --help` (and of the groups it lists) is in the synopsis.
    const commands: string[] = [];
    for (const name of listed((await usage([])).split('Commands:')[1]!.split('\n\n')[0]!)) {
      const help = await usage([name]);
      if (help.startsWith(`Usage: orgmem ${name} <command>`)) for (const sub of listed(help)) commands.push(`${name} ${sub}`);
      else commands.push(name);
    }
    expect(lines.map((l) => commandOf(l).join(' ')).sort()).toEqual(commands.sort());
  },

  // docs/connectors.md
  async 'connector-create'(block) {
    const t = await tenant();
    const ran = await sh({ ...block, code: block.code.replaceAll('lin_api_...', LINEAR_FAKE_TOKEN) }, { KEY: t.key });
    expectSuccess(ran);
    const [connection] = answers(ran);
    expect(connection).toMatchObject({ provider: 'linear', collection: 'issues', status: 'active' });
    expect(JSON.stringify(connection)).not.toContain(LINEAR_FAKE_TOKEN);
  },
  async 'connector-sync'(block) {
    const t = await tenant();
    const made = await t.api('POST', '/v1/memory/connections', {
      provider: 'linear',
      collection: 'issues',
      credentials: { token: LINEAR_FAKE_TOKEN },
      config: {},
    });
    expect(made.status).toBe(201);
    const ran = await sh(block, { KEY: t.key, ID: made.body.id });
    expectSuccess(ran);
    const [sync, runs] = answers(ran);
    expect(sync).toMatchObject({ synced: 3, status: 'active', last_error: null });
    expect(runs).toEqual([expect.objectContaining({ synced_count: 3 })]);
    expect((await t.api('GET', '/v1/memory/collections/issues/memories')).body).toHaveLength(3);
  },

  // docs/deployment.md
  async 'tenant-database'(block) {
    const t = await tenant();
    const base = process.env.TEST_DATABASE_URL;
    if (!base) {
      // The embedded database cannot hand a tenant's data to another: the route says so.
      const ran = await sh(block, { KEY: t.key });
      expect(ran.status).toBe(22); // curl --fail-with-body on an HTTP error
      expect(JSON.parse(ran.stdout).detail).toMatch(/needs the service to run on a PostgreSQL server/);
      return;
    }
    const name = `orgmem_docs_${randomBytes(5).toString('hex')}`;
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    try {
      const url = new URL(base);
      url.pathname = `/${name}`;
      const ran = await sh({ ...block, code: block.code.replace(/postgres:\/\/me:secret@[^"]+/, url.toString()) }, { KEY: t.key });
      expectSuccess(ran);
      expect(answers(ran)[0].note).toEqual(expect.any(String));
      expect((await t.api('DELETE', '/v1/memory/database/config')).status).toBe(200);
    } finally {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  },

  // docs/email.md
  async 'email-address'(block) {
    const t = await tenant();
    const ran = await sh(block, { KEY: t.key });
    expectSuccess(ran);
    const [address, senders] = answers(ran);
    expect(address).toEqual({ address: expect.stringMatching(new RegExp(`^[a-z0-9]{24}@${DOMAIN}$`)), collection: 'email' });
    expect(senders.senders.map((s: { sender: string }) => s.sender)).toEqual(expect.arrayContaining(['ana@example.com', '@example.org']));
  },
  async 'email-drop-script'(block) {
    const t = await tenant();
    const { address } = (await t.api('GET', '/v1/memory/email/address')).body;
    const me = (await t.api('GET', '/v1/memory/admin/me')).body.email as string;
    const dir = tempDir();
    const secretFile = join(dir, 'inbound-secret');
    const script = join(dir, 'orgmem-drop');
    writeFileSync(script, block.code.replaceAll('https://orgmem.internal', server.url).replaceAll('/etc/orgmem/inbound-secret', secretFile));
    chmodSync(script, 0o755);
    const mail = (subject: string) =>
      [
        `From: Ana <${me}>`,
        `To: ${address}`,
        `Subject: ${subject}`,
        `Message-ID: <${randomBytes(6).toString('hex')}@test.local>`,
        'Content-Type: text/plain',
        '',
        'The offsite moves to Lisbon.',
        '',
      ].join('\r\n');
    const drop = (input: string, sender = me) => run('sh', [script, sender, address], { cwd: dir, env: { PATH: process.env.PATH }, input });

    writeFileSync(secretFile, SECRET);
    expectSuccess(await drop(mail('Offsite')));
    const stored = await until('the mail stored as a memory', async () => {
      const list = (await t.api('GET', '/v1/memory/collections/email/memories')).body;
      return Array.isArray(list) && list.length ? list : undefined;
    });
    expect(stored[0].text).toMatch(/^Subject: Offsite\n/);
    // A sender with a quoted local part: the script's JSON still parses (202, the mail dropped as not allowed).
    expectSuccess(await drop(mail('Quoted'), '"ana b"@example.com'));
    expect((await drop('this is not a mail message')).status).toBe(65);
    writeFileSync(secretFile, 'not-the-inbound-secret');
    expect((await drop(mail('Refused'))).status).toBe(75);
  },

  // docs/import.md
  async 'import-file'(block) {
    const t = await tenant();
    const ran = await sh(block, { KEY: t.key });
    expectSuccess(ran);
    const [started, pam] = answers(ran);
    expect(started).toMatchObject({ idempotency_key: 'mem0-dump-1', state: expect.stringMatching(/^(queued|running|done)$/), total: 1 });
    expect(pam).toMatchObject({
      schema: 'portable-ai-memory',
      schema_version: '1.0',
      memories: [{ content: 'Prefers aisle seats', temporal: { created_at: '2024-03-05T09:15:00.000Z' }, metadata: { import_source: 'mem0:m-1' } }],
    });
  },

  // docs/operations.md
  async 'metrics-prometheus'(block) {
    const ran = await sh(block, { KEY: server.adminKey });
    expectSuccess(ran);
    expect(ran.stdout).toMatch(/^# TYPE orgmem_request_duration_seconds histogram$/m);
  },
  async status(block) {
    const ran = await sh(block, {});
    expectSuccess(ran);
    const [status] = answers(ran);
    expect(status).toMatchObject({ status: expect.stringMatching(/^(operational|degraded|down)$/), components: expect.any(Object) });
    expect(status).toHaveProperty('uptime_24h');
  },

  // docs/proxy.md
  async 'proxy-curl'(block) {
    const t = await tenantWithLlm();
    await store(t, 'notes', 'Ana prefers oat milk');
    const ran = await sh(block, { KEY: t.key });
    expectSuccess(ran);
    const [answer] = answers(ran);
    expect(answer.choices[0].message.content).toBe('OK');
    expect(answer.memvault).toMatchObject({ stored: false, memories_used: [expect.objectContaining({ text: 'Ana prefers oat milk', collection: 'notes' })] });
  },

  // docs/rest.md
  async 'rest-openapi'(block) {
    const cwd = tempDir();
    expectSuccess(await sh(block, {}, cwd));
    const doc = JSON.parse(readFileSync(join(cwd, 'openapi.json'), 'utf8'));
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.paths)).toContain('/v1/memory/collections/{collection}/memories');
  },
  async 'rest-collections'(block) {
    const t = await tenant();
    const ran = await sh(block, { KEY: t.key });
    expectSuccess(ran);
    const [collection, bulk, listed] = answers(ran);
    expect(collection).toMatchObject({ name: 'team', description: 'What the team decided' });
    expect(bulk).toEqual({ created: 2, ids: [expect.any(String), expect.any(String)] });
    expect(listed).toEqual([expect.objectContaining({ id: bulk.ids[0], text: 'We ship on Thursdays', category: 'decision' })]);
  },
  async 'rest-memory'(block) {
    const t = await tenant();
    const id = await store(t, 'team', 'We ship on Thursdays');
    const ran = await sh(block, { KEY: t.key, ID: id });
    expectSuccess(ran);
    const [got, patched, pinned, ...rest] = answers(ran);
    expect(got).toMatchObject({ id, text: 'We ship on Thursdays' });
    expect(patched).toMatchObject({ id, importance: 0.9 });
    expect(pinned).toMatchObject({ id, pinned: true });
    expect(rest).toEqual([]); // the delete answers 204, no body
    expect((await t.api('GET', `/v1/memory/collections/team/memories/${id}`)).status).toBe(404);
  },

  // docs/trpc.md
  async 'trpc-errors'(block) {
    const t = await tenant();
    const ran = await runTs(block, t.key);
    expectSuccess(ran);
    expect(ran.stdout).toMatch(/^422 \S/);
    expect((await t.api('GET', '/v1/memory/collections')).body).toEqual([]);
  },
};

describe('code blocks of the README and docs/', () => {
  const blocks = allBlocks();

  it('each carries a marker: run here, run by test/mcp-readme.test.ts, or not run for a stated reason', () => {
    expect(blocks.filter((b) => !b.marker).map((b) => `${b.page}:${b.line}`)).toEqual([]);
  });

  it('has one runner for each snippet and a snippet for each runner', () => {
    const names = blocks.filter((b) => b.marker?.kind === 'snippet').map((b) => b.marker!.value);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    expect([...names].sort()).toEqual(Object.keys(RUNS).sort());
    for (const b of blocks.filter((b) => b.marker?.kind === 'snippet')) expect(['sh', 'ts', 'js', 'text'], `${b.page}:${b.line}`).toContain(b.lang);
  });

  it('marks as MCP configs exactly those test/mcp-readme.test.ts runs', () => {
    const configs = blocks.filter((b) => b.marker?.kind === 'mcp-config').map((b) => b.marker!.value);
    const run = [...readFileSync(join(ROOT, 'test', 'mcp-readme.test.ts'), 'utf8').matchAll(/\bconfig\('([a-z-]+)'\)/g)].map((m) => m[1]!);
    expect([...configs].sort()).toEqual([...new Set(run)].sort());
  });

  // tsc over the client project blocks for tens of seconds on a loaded 2-core machine: compiled
  // here with a budget of its own, not inside the first snippet's 60 s.
  it('compiles the TypeScript snippets as one client project against orgmem/trpc', () => {
    expect(snippetProject().dir).toMatch(/./);
  }, 300_000);

  for (const block of blocks.filter((b) => b.marker?.kind === 'snippet')) {
    it(`${block.page}: ${block.marker!.value}`, () => RUNS[block.marker!.value]!(block));
  }
});

/** GitHub's anchor of a heading: lower case, punctuation gone, spaces as hyphens; repeats numbered. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/^(`{3,})[\s\S]*?^\1/gm, '');
  const found = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replaceAll(' ', '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    found.add(n ? `${slug}-${n}` : slug);
  }
  return found;
}

describe('links between the README, docs/ and bench/README.md', () => {
  for (const page of [...DOC_PAGES, 'bench/README.md']) {
    it(page, () => {
      const text = readFileSync(join(ROOT, page), 'utf8').replace(/^(`{3,})[\s\S]*?^\1/gm, '');
      const broken: string[] = [];
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // another site
        const [path, anchor] = target!.split('#');
        const file = path ? relative(ROOT, join(ROOT, dirname(page), path)) : page;
        if (!existsSync(join(ROOT, file))) broken.push(`${target} (no ${file})`);
        else if (anchor && !anchors(file).has(anchor)) broken.push(`${target} (no heading #${anchor} in ${file})`);
      }
      expect(broken).toEqual([]);
    });
  }
});
