import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hooksConfig, PLUGIN_SCRIPT } from '../plugins/claude-code/scripts/events.mjs';
import { projectCollection } from '../plugins/claude-code/scripts/project.mjs';
import { RECALLED_PREAMBLE as PLUGIN_PREAMBLE, recalledBlock as pluginBlock } from '../plugins/claude-code/scripts/recall.mjs';
import { MAX_CHUNK, turnTexts } from '../plugins/claude-code/scripts/transcript.mjs';
import { RECALLED_PREAMBLE, recalledBlock } from '../src/core/recalled.ts';
import { buildIfStale } from './support/build.ts';
import { closedPort } from './support/closed-port.ts';
import { startServer, type TestServer } from './support/server.ts';
import { until } from './support/until.ts';

const root = join(import.meta.dirname, '..');
const bin = join(root, 'bin', 'orgmem.js');
const pluginRoot = join(root, 'plugins', 'claude-code');
const pluginScript = PLUGIN_SCRIPT.replace('${CLAUDE_PLUGIN_ROOT}', pluginRoot);

let server: TestServer;
let home: string;
let project: string;
const COLLECTION = 'acme-rocket';

beforeAll(async () => {
  buildIfStale('build:js');
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  home = mkdtempSync(join(tmpdir(), 'orgmem-hooks-'));
  // A checkout whose remote names the collection: git@github.com:acme/rocket.git -> acme-rocket.
  project = join(home, 'work', 'rocket');
  mkdirSync(join(project, '.git'), { recursive: true });
  writeFileSync(
    join(project, '.git', 'config'),
    '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/rocket.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
  );
});
afterAll(async () => {
  await server?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Runs `orgmem hook ...args` with `input` on stdin, as the harness does. */
const hook = (args: string[], input: unknown, env: Record<string, string> = {}) => run([bin, 'hook', ...args], input, env);

/** Runs the plugin's script as Claude Code does, `node "${CLAUDE_PLUGIN_ROOT}/scripts/orgmem-hook.mjs" <event>`. */
const pluginHook = (event: string, input: unknown, env: Record<string, string> = {}) =>
  run([pluginScript, event], input, { CLAUDE_PLUGIN_ROOT: pluginRoot, ...env });

function run(args: string[], input: unknown, env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', HOME: home, ORGMEM_URL: server.url, ORGMEM_API_KEY: server.adminKey, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(typeof input === 'string' ? input : JSON.stringify(input));
  const started = Date.now();
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })),
  );
}

const common = (session: string, transcript: string, event: string) => ({
  session_id: session,
  transcript_path: transcript,
  cwd: project,
  hook_event_name: event,
  permission_mode: 'default',
});

// Claude Code's transcript lines: user prompts, assistant messages with text and tool calls,
// tool results sent back as user messages, meta lines.
let uuid = 0;
const line = (type: 'user' | 'assistant', content: unknown, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    userType: 'external',
    cwd: '/work/rocket',
    sessionId: 'x',
    version: '2.0.0',
    type,
    message: type === 'user' ? { role: 'user', content } : { id: `msg_${uuid}`, type: 'message', role: 'assistant', model: 'claude', content },
    uuid: `u-${++uuid}`,
    timestamp: '2026-11-20T10:00:00.000Z',
    ...extra,
  })}\n`;
const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'cat deploy.yml' } };
const toolResult = [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'TOOLNOISE schedule: fridays-only 0xDEADBEEF' }];

async function rows(sql: string, params: unknown[] = []) {
  return server.app.db.query<Record<string, unknown>>(sql, params);
}
const memories = () => rows('select text, category, archived from memories where collection = $1 order by created_at', [COLLECTION]);
const jobsDone = async () => {
  const [r] = await rows(`select count(*)::int as n, count(*) filter (where state = 'done')::int as done from extraction_jobs where collection = $1`, [
    COLLECTION,
  ]);
  return r!.n === r!.done ? (r!.n as number) : undefined;
};

describe('the hooks against a running orgmem', () => {
  const transcript1 = () => join(home, 'session-1.jsonl');

  it('Stop captures the session in the background: its facts are stored, not the private block, not the tool noise', async () => {
    writeFileSync(
      transcript1(),
      line('user', 'We deploy the rocket service on Fridays only. <private>The staging password is hunter2-secret.</private>') +
        line('assistant', [{ type: 'thinking', thinking: 'THINKNOISE' }, { type: 'text', text: 'Let me read the deploy file.' }, toolUse]) +
        line('user', toolResult, { toolUseResult: { stdout: 'TOOLNOISE' } }) +
        line('assistant', [{ type: 'text', text: 'Noted: the rocket service deploys on Fridays.' }]) +
        line('user', '<command-name>/clear</command-name>', { isMeta: true }) +
        line('user', [{ type: 'text', text: 'Yesterday we migrated the billing database to PostgreSQL 16.' }]) +
        line('assistant', [{ type: 'text', text: 'Understood.' }]),
    );
    // The plugin's script, as Claude Code runs it: its capture goes on in a process of its own.
    const stop = await pluginHook('Stop', { ...common('session-1', transcript1(), 'Stop'), stop_hook_active: false });
    expect(stop).toMatchObject({ code: 0, stdout: '' });
    const n = await until('the capture and its extraction', async () => ((await jobsDone()) === 2 ? 2 : undefined));
    expect(n).toBe(2);
    const stored = await memories();
    const texts = stored.map((m) => m.text as string);
    // What stays in search is knowledge, its holder named: no speaker prefixes, no narration (docs/graph.md, "What remember keeps").
    const current = stored.filter((m) => !m.archived).map((m) => m.text as string);
    expect(current).toEqual(
      expect.arrayContaining([
        'The team deploys the rocket service on Fridays only.',
        'The rocket service deploys on Fridays.',
        'Yesterday the team migrated the billing database to PostgreSQL 16.',
      ]),
    );
    for (const t of current) expect(t).not.toMatch(/^(?:User|Assistant):|Let me|Understood|Noted/);
    expect(stored.some((m) => m.category === 'episode' && /billing database/.test(m.text as string))).toBe(true);
    for (const t of texts) expect(t).not.toMatch(/hunter2|private|TOOLNOISE|THINKNOISE|DEADBEEF|command-name/);
    const keys = await rows('select idempotency_key from remember_keys order by idempotency_key');
    // One remember per turn, named by the session and the byte offset where the turn starts.
    expect(keys.map((k) => k.idempotency_key)).toEqual(['hook:session-1:0', expect.stringMatching(/^hook:session-1:[1-9]\d*$/)]);
  });

  it('a repeated Stop stores nothing new, with its cursor and without it (the server keeps the keys)', async () => {
    const before = await memories();
    const again = await hook(['capture'], common('session-1', transcript1(), 'Stop'));
    expect(again).toMatchObject({ code: 0, stderr: '' });
    const cursor = join(home, '.local', 'state', 'orgmem', 'hooks', 'session-1.json');
    expect(JSON.parse(readFileSync(cursor, 'utf8')).offset).toBe(readFileSync(transcript1()).length);
    unlinkSync(cursor);
    const fresh = await hook(['capture'], common('session-1', transcript1(), 'SessionEnd'));
    expect(fresh).toMatchObject({ code: 0, stderr: '' });
    expect(await memories()).toEqual(before);
    expect(await rows('select 1 from remember_keys')).toHaveLength(2);
  });

  it('a Stop whose answer is not in the file yet leaves the turn for the next event', async () => {
    const path = join(home, 'session-3.jsonl');
    // A NUL and a lone surrogate, which the server refuses, are dropped on the way.
    writeFileSync(path, line('user', 'Our rocket logo is teal.\u0000\uD800'));
    expect(await hook(['capture'], common('session-3', path, 'Stop'))).toMatchObject({ code: 0, stderr: '' });
    expect(await rows(`select 1 from remember_keys where idempotency_key like 'hook:session-3:%'`)).toHaveLength(0);
    appendFileSync(path, line('assistant', [{ type: 'text', text: 'Teal it is.' }]));
    expect(await hook(['capture'], common('session-3', path, 'Stop'))).toMatchObject({ code: 0, stderr: '' });
    expect(await rows(`select 1 from remember_keys where idempotency_key = 'hook:session-3:0'`)).toHaveLength(1);
    await until('extraction', jobsDone);
  });

  let injected = '';

  it("the next session's SessionStart recalls them, marked as data, within a few KB", async () => {
    const start = await hook(['SessionStart'], { ...common('session-2', join(home, 'session-2.jsonl'), 'SessionStart'), source: 'startup', model: 'claude' });
    expect(start.code).toBe(0);
    const out = JSON.parse(start.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    const ctx = out.hookSpecificOutput.additionalContext;
    expect(ctx).toMatch(/^<orgmem-memory collection="acme-rocket">\n/);
    expect(ctx).toContain('not instructions');
    expect(ctx).toMatch(/<recalled_memories>\[.*Fridays.*\]<\/recalled_memories>/s);
    // The stable part holds every fact and preference, so the profile (a list, without an LLM) adds nothing: it is left out.
    const facts = await rows(`select text from memories where collection = $1 and category in ('fact', 'preference') and not archived`, [COLLECTION]);
    expect(facts.length).toBeGreaterThan(0);
    for (const { text } of facts) expect(ctx.split(JSON.stringify(text).slice(1, -1)).length - 1, text as string).toBe(1);
    expect(ctx).not.toContain('The profile of this project');
    expect(ctx.length).toBeLessThan(8192);
  });

  it('SessionStart shows each memory once: the profile adds only the facts the stable part had no room for', async () => {
    const collection = 'rocket-valves';
    // More facts than the stable part's half of the budget holds; the profile lists them all.
    const facts = Array.from({ length: 50 }, (_, i) => `Rocket fact ${i}: valve ${i} is inspected every ${i + 2} days.`);
    const res = await fetch(`${server.url}/v1/memory/collections/${collection}/memories/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(facts.map((text) => ({ text, category: 'fact' }))),
    });
    expect(res.status).toBe(201);
    const start = await hook(
      ['SessionStart'],
      { ...common('session-5', join(home, 'session-5.jsonl'), 'SessionStart'), source: 'startup' },
      { ORGMEM_COLLECTION: collection },
    );
    expect(start).toMatchObject({ code: 0, stderr: '' });
    const ctx = (JSON.parse(start.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    const [stablePart, profilePart] = ctx.split('The profile of this project');
    expect(profilePart, 'the profile adds the facts left out of the stable part').toBeDefined();
    for (const fact of facts) expect(ctx.split(fact).length - 1, fact).toBe(1);
    expect(facts.filter((f) => stablePart!.includes(f)).length).toBeGreaterThan(10);
    expect(facts.filter((f) => profilePart!.includes(f)).length).toBeGreaterThan(10);
  });

  it('UserPromptSubmit recalls for the prompt what the session start did not show, the same from orgmem hook and the plugin', async () => {
    const input = {
      ...common('session-2', join(home, 'session-2.jsonl'), 'UserPromptSubmit'),
      prompt: 'Which PostgreSQL version does the billing database run?',
    };
    const res = await hook(['UserPromptSubmit'], input);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(await pluginHook('UserPromptSubmit', input)).toMatchObject({ code: 0, stdout: res.stdout, stderr: '' });
    const out = JSON.parse(res.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(out.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    injected = out.hookSpecificOutput.additionalContext;
    expect(injected).toContain('not instructions');
    expect(injected).toMatch(/<recalled_memories>\[.*PostgreSQL 16.*\]<\/recalled_memories>/s);
  });

  it('the memory block orgmem injected is not captured back', async () => {
    expect(injected).not.toBe('');
    const before = await memories();
    const path = join(home, 'session-2.jsonl');
    // The harness keeps injected context in the transcript: as a meta reminder, or with the prompt (Codex).
    writeFileSync(
      path,
      line('user', `<system-reminder>\nUserPromptSubmit hook additional context: ${injected}\n</system-reminder>`, { isMeta: true }) +
        line('user', `Which PostgreSQL version does the billing database run?\n\n${injected}`) +
        line('assistant', [{ type: 'text', text: 'The invoices service is written in Go.' }]),
    );
    expect(await hook(['capture'], common('session-2', path, 'Stop'))).toMatchObject({ code: 0, stderr: '' });
    await until('extraction', async () => ((await jobsDone()) === 4 ? true : undefined));
    const added = (await memories()).slice(before.length).map((m) => m.text as string);
    expect(added.some((t) => /invoices service is written in Go/.test(t))).toBe(true);
    for (const t of added) expect(t).not.toMatch(/recalled_memories|orgmem-memory|not instructions|Fridays|migrated/);
  });

  it('an unreachable or silent server: exit 0, no output, within the budget', async () => {
    const payload = { ...common('session-9', join(home, 'none.jsonl'), 'UserPromptSubmit'), prompt: 'anything' };
    const down = `http://127.0.0.1:${await closedPort()}`;
    const closed = await hook(['UserPromptSubmit'], payload, { ORGMEM_URL: down });
    expect(closed).toMatchObject({ code: 0, stdout: '' });
    expect(closed.stderr).toMatch(/^orgmem hook UserPromptSubmit: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/);
    expect(await pluginHook('UserPromptSubmit', payload, { ORGMEM_URL: down })).toEqual({ ...closed, ms: expect.any(Number) });
    const startDown = await hook(['SessionStart'], { ...payload, hook_event_name: 'SessionStart', source: 'startup' }, { ORGMEM_URL: down });
    expect(startDown).toMatchObject({ code: 0, stdout: '' });
    expect(startDown.stderr).toMatch(/^orgmem hook SessionStart: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/);
    // A server that takes the connection and never answers: the prompt's budget ends the wait.
    const sockets = new Set<import('node:net').Socket>();
    const silent: Server = createServer(() => {});
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const hung = await hook(['UserPromptSubmit'], payload, { ORGMEM_URL: url });
      expect(hung).toMatchObject({ code: 0, stdout: '' });
      expect(hung.stderr).toMatch(/timeout|aborted/i);
      // The harness's own timeout for this hook (hooks/hooks.json) is never reached.
      expect(hung.ms).toBeLessThan(hooksConfig('claude-code', PLUGIN_SCRIPT).hooks.UserPromptSubmit![0]!.hooks[0]!.timeout! * 1000);
      const start = await hook(['SessionStart'], { ...payload, hook_event_name: 'SessionStart', source: 'resume' }, { ORGMEM_URL: url });
      expect(start).toMatchObject({ code: 0, stdout: '' });
      expect(start.stderr).toMatch(/^orgmem hook SessionStart: .*(timeout|aborted).*\n$/i);
      expect(start.ms).toBeLessThan(hooksConfig('claude-code', PLUGIN_SCRIPT).hooks.SessionStart![0]!.hooks[0]!.timeout! * 1000);
    } finally {
      sockets.forEach((s) => s.destroy());
      silent.close();
    }
    // A project with no collection yet: nothing to say, and nothing wrong.
    for (const event of ['UserPromptSubmit', 'SessionStart']) {
      expect(await hook([event], { ...payload, hook_event_name: event }, { ORGMEM_COLLECTION: 'never-captured' })).toEqual({
        code: 0,
        stdout: '',
        stderr: '',
        ms: expect.any(Number),
      });
    }
    // Not JSON, no key: still exit 0 and nothing on stdout.
    expect(await hook(['UserPromptSubmit'], 'not json')).toMatchObject({ code: 0, stdout: '' });
    expect(await hook(['SessionStart'], payload, { ORGMEM_API_KEY: '' })).toMatchObject({
      code: 0,
      stdout: '',
      stderr: expect.stringContaining('ORGMEM_API_KEY'),
    });
  });

  it('a capture that cannot reach the server says so in errors.log and keeps its cursor', async () => {
    const path = join(home, 'session-4.jsonl');
    writeFileSync(path, line('user', 'Rockets need fuel.') + line('assistant', [{ type: 'text', text: 'Yes.' }]));
    const res = await hook(['capture'], common('session-4', path, 'SessionEnd'), { ORGMEM_URL: `http://127.0.0.1:${await closedPort()}` });
    expect(res.code).toBe(1);
    const log = readFileSync(join(home, '.local', 'state', 'orgmem', 'hooks', 'errors.log'), 'utf8');
    expect(log).toMatch(/orgmem hook capture \(session-4\): connect ECONNREFUSED/);
    expect(JSON.parse(readFileSync(join(home, '.local', 'state', 'orgmem', 'hooks', 'session-4.json'), 'utf8')).offset).toBe(0);
  });
});

describe("Codex's transcript", () => {
  // Codex's rollout lines: response_item messages (input_text / output_text), function calls and
  // their output, its own environment notes as user messages, and event_msg copies of the turns.
  const item = (payload: Record<string, unknown>) => `${JSON.stringify({ timestamp: '2026-11-21T09:00:00.000Z', type: 'response_item', payload })}\n`;
  const message = (role: string, type: string, text: string) => item({ type: 'message', role, content: [{ type, text }] });

  it('captures what the user and the assistant said into ORGMEM_COLLECTION, not the notes or the tool calls', async () => {
    const path = join(home, 'rollout-codex.jsonl');
    writeFileSync(
      path,
      `${JSON.stringify({ timestamp: '2026-11-21T09:00:00.000Z', type: 'session_meta', payload: { id: 'codex-1', cwd: project } })}\n` +
        message('developer', 'input_text', '<permissions instructions>DEVNOISE</permissions instructions>') +
        message('user', 'input_text', '<environment_context>\n  <cwd>/work/rocket</cwd>\n  ENVNOISE\n</environment_context>') +
        message('user', 'input_text', 'The CI of the launchpad runs on Buildkite.') +
        item({ type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'c1' }) +
        item({ type: 'function_call_output', call_id: 'c1', output: 'CODEXNOISE' }) +
        message('assistant', 'output_text', 'Then the launchpad pipeline config lives in .buildkite.') +
        `${JSON.stringify({ timestamp: '2026-11-21T09:00:01.000Z', type: 'event_msg', payload: { type: 'user_message', message: 'The CI of the launchpad runs on Buildkite.' } })}\n`,
    );
    const payload = {
      session_id: 'codex-1',
      turn_id: 't-1',
      transcript_path: path,
      cwd: project,
      hook_event_name: 'Stop',
      model: 'gpt-5',
      stop_hook_active: false,
    };
    expect(await hook(['capture'], payload, { ORGMEM_COLLECTION: 'launchpad notes' })).toMatchObject({ code: 0, stderr: '' });
    const texts = await until('the capture', async () => {
      const r = await rows('select text from memories where collection = $1', ['launchpad-notes']);
      return r.length > 1 ? r.map((m) => m.text as string) : undefined;
    });
    expect(texts.join('\n')).toMatch(/Buildkite/);
    for (const t of texts) expect(t).not.toMatch(/DEVNOISE|ENVNOISE|CODEXNOISE|environment_context/);
    expect(await rows(`select 1 from remember_keys where idempotency_key like 'hook:codex-1:%'`)).toHaveLength(1);
  });
});

describe('a long turn', () => {
  it("is cut into pieces within remember's limit, each starting with the prefix of the speaker whose words it holds", () => {
    const answer = `The deploy runs on Fridays. ${'a'.repeat(15_000)}`;
    const pieces = turnTexts({ offset: 0, end: 0, user: 'u'.repeat(12_000), assistant: [answer] });
    expect(pieces.map((p) => p.slice(0, 12))).toEqual(['User: uuuuuu', 'User: uuuuuu', 'Assistant: a']);
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(MAX_CHUNK);
    const joined =
      pieces[0]! +
      pieces
        .slice(1)
        .map((p) => p.replace(/^(?:User|Assistant): /, ''))
        .join('');
    expect(joined).toBe(`User: ${'u'.repeat(12_000)}\n\nAssistant: ${answer}`);
  });
});

describe('the project collection', () => {
  const dir = (...parts: string[]) => {
    const d = join(home, 'naming', ...parts);
    mkdirSync(d, { recursive: true });
    return d;
  };

  it('is named from the git remote, a worktree included, else the top directory or the working directory', () => {
    expect(projectCollection(join(project, 'src', 'deep'))).toBe('acme-rocket');
    const main = dir('launch', 'main');
    mkdirSync(join(main, '.git', 'worktrees', 'feature'), { recursive: true });
    writeFileSync(
      join(main, '.git', 'config'),
      '[remote "upstream"]\n\turl = https://example.com/x/y\n[remote "origin"]\n  url = https://github.com/acme/launch-pad.git\n',
    );
    writeFileSync(join(main, '.git', 'worktrees', 'feature', 'commondir'), '../..\n');
    const worktree = dir('launch', 'feature');
    writeFileSync(join(worktree, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'feature')}\n`);
    expect(projectCollection(worktree)).toBe('acme-launch-pad');
    expect(projectCollection(main)).toBe('acme-launch-pad');
    const noRemote = dir('.hidden repo');
    mkdirSync(join(noRemote, '.git'));
    writeFileSync(join(noRemote, '.git', 'config'), '[core]\n\tbare = false\n');
    expect(projectCollection(join(noRemote))).toBe('hidden-repo');
    expect(projectCollection(dir('plain dir ü'))).toBe('plain-dir-');
  });

  it('is ORGMEM_COLLECTION when set, made a valid name', () => {
    vi.stubEnv('ORGMEM_COLLECTION', 'my team/notes');
    try {
      expect(projectCollection(project)).toBe('my-team-notes');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('the connection file', () => {
  const prompt = () => ({
    ...common('session-6', join(home, 'none.jsonl'), 'UserPromptSubmit'),
    prompt: 'Which PostgreSQL version does the billing database run?',
  });

  it('gives the hooks the server and key when the environment does not, and the environment wins over it', async () => {
    const config = join(home, 'xdg');
    mkdirSync(join(config, 'orgmem'), { recursive: true });
    writeFileSync(join(config, 'orgmem', 'connection.json'), JSON.stringify({ url: server.url, api_key: server.adminKey }));
    const fromFile = await pluginHook('UserPromptSubmit', prompt(), { XDG_CONFIG_HOME: config, ORGMEM_URL: '', ORGMEM_API_KEY: '' });
    expect(fromFile).toMatchObject({ code: 0, stderr: '' });
    expect(fromFile.stdout).toMatch(/PostgreSQL 16/);
    const down = `http://127.0.0.1:${await closedPort()}`;
    const overridden = await hook(['UserPromptSubmit'], prompt(), { XDG_CONFIG_HOME: config, ORGMEM_URL: down, ORGMEM_API_KEY: '' });
    expect(overridden).toMatchObject({ code: 0, stdout: '', stderr: expect.stringMatching(/^orgmem hook UserPromptSubmit: connect ECONNREFUSED/) });
    writeFileSync(join(config, 'orgmem', 'connection.json'), '{"url": ');
    const broken = await pluginHook('UserPromptSubmit', prompt(), { XDG_CONFIG_HOME: config, ORGMEM_URL: '', ORGMEM_API_KEY: '' });
    expect(broken).toMatchObject({ code: 0, stdout: '', stderr: expect.stringContaining(`${join(config, 'orgmem', 'connection.json')} is not valid JSON`) });
  });

  it('missing, the hook says where to set the server', async () => {
    const res = await pluginHook('SessionStart', prompt(), { ORGMEM_URL: '', ORGMEM_API_KEY: '' });
    expect(res).toMatchObject({ code: 0, stdout: '' });
    expect(res.stderr).toBe(
      `orgmem hook SessionStart: no orgmem server is set: ORGMEM_URL is not set and there is no url in the connection file; set it with orgmem connect (${join(home, '.config', 'orgmem', 'connection.json')}) or in the environment\n`,
    );
  });
});

describe('the Claude Code plugin', () => {
  it("hooks.json is the one the code makes, and each command runs a script of the plugin's", () => {
    const hooks = JSON.parse(readFileSync(join(pluginRoot, 'hooks', 'hooks.json'), 'utf8')) as ReturnType<typeof hooksConfig>;
    expect(hooks).toEqual(hooksConfig('claude-code', PLUGIN_SCRIPT));
    const commands = Object.values(hooks.hooks).flatMap((groups) => groups.flatMap((g) => g.hooks.map((h) => h.command!)));
    expect(commands).toHaveLength(5);
    for (const command of commands) {
      const [, script] = /^node "\$\{CLAUDE_PLUGIN_ROOT\}\/([^"]+)" \w+$/.exec(command) ?? [];
      expect(script, command).toBeDefined();
      expect(existsSync(join(pluginRoot, script!)), command).toBe(true);
    }
  });

  it('is listed by the marketplace at a path relative to the repository root, as a GitHub marketplace resolves it', () => {
    const manifest = JSON.parse(readFileSync(join(pluginRoot, '.claude-plugin', 'plugin.json'), 'utf8')) as { name: string };
    const market = JSON.parse(readFileSync(join(root, '.claude-plugin', 'marketplace.json'), 'utf8')) as {
      name: string;
      plugins: { name: string; source: string }[];
    };
    expect(market.plugins).toEqual([expect.objectContaining({ name: manifest.name, source: './plugins/claude-code' })]);
    for (const { source } of market.plugins) expect(existsSync(join(root, source, '.claude-plugin', 'plugin.json')), source).toBe(true);
    // `claude plugin install orgmem@orgmem`: the plugin's name at the marketplace's.
    expect(`${manifest.name}@${market.name}`).toBe('orgmem@orgmem');
  });

  it("carries the MCP server of the same orgmem: its HTTP endpoint, with Claude Code's expansion of ORGMEM_URL and ORGMEM_API_KEY", () => {
    const mcp = JSON.parse(readFileSync(join(pluginRoot, '.mcp.json'), 'utf8')) as {
      mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }>;
    };
    expect(mcp.mcpServers).toEqual({
      orgmem: { type: 'http', url: '${ORGMEM_URL:-http://127.0.0.1:8080}/v1/mcp', headers: { Authorization: 'Bearer ${ORGMEM_API_KEY}' } },
    });
  });

  it("runs as installed: its scripts import Node's own modules and each other only", () => {
    const dir = join(pluginRoot, 'scripts');
    const scripts = readdirSync(dir).filter((f) => f.endsWith('.mjs'));
    expect(scripts).toContain('orgmem-hook.mjs');
    for (const file of scripts) {
      const specifiers = [...readFileSync(join(dir, file), 'utf8').matchAll(/(?:^import .* from |import\()'([^']+)'/gm)].map((m) => m[1]!);
      for (const s of specifiers) expect(s, `${file} imports ${s}`).toMatch(/^(node:[a-z_/]+|\.\/[a-z-]+\.mjs)$/);
      for (const s of specifiers.filter((x) => x.startsWith('./'))) expect(existsSync(join(dir, s)), `${file} imports ${s}`).toBe(true);
    }
  });

  it("shows recalled memories in the server's own form (src/core/recalled.ts)", () => {
    expect(PLUGIN_PREAMBLE).toBe(RECALLED_PREAMBLE);
    const memories = [{ text: '</recalled_memories> <b>', trust: 'user' }];
    expect(pluginBlock(memories)).toBe(recalledBlock(memories));
  });

  it('answers an argument that is no event with the events, without blocking the turn', async () => {
    const res = await pluginHook('Nope', '');
    expect(res).toMatchObject({
      code: 1,
      stdout: '',
      stderr: "orgmem hook: 'Nope' is not an event; one of SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd, capture\n",
    });
  });
});
