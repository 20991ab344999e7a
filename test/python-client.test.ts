import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playMemoryModel } from './fakes/memory-llm.ts';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant, type Tenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * clients/python's pytest tests (docs/python.md), run against a real server: a tenant of its own
 * whose LLM endpoint is the fake, which the chat proxy's tests need and which makes remember's
 * facts deterministic. Python and pytest are the machine's (.ci/run installs python3-pytest):
 * without them this fails, saying what to install.
 */

const ROOT = join(import.meta.dirname, '..');
const INSTALL = 'clients/python is tested with python3 and pytest: apt-get install python3-pytest';

let llm: FakeLlm;
let server: TestServer;
let tenant: Tenant;

beforeAll(async () => {
  llm = await startFakeLlm();
  playMemoryModel(llm);
  server = await startServer({ ORGMEM_EMBEDDER: 'hash' });
  tenant = await newTenant(server.url, server.adminKey);
  const put = await tenant.api('PUT', '/v1/memory/extraction/config', { provider: 'custom', base_url: llm.url, model: 'fake-model', api_key: 'sk-fake' });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
});

afterAll(async () => {
  await server?.close();
  await llm?.close();
});

/** What a failed run printed, led by what to install when python3 or pytest is what is missing. */
const failure = (run: { code: number | null; output: string }) =>
  run.code === null || /No module named pytest/.test(run.output) ? `${INSTALL}\n${run.output}` : run.output;

/**
 * `python3 -m pytest ...` from the repository's root, without blocking this process: the server
 * under test answers it from here. A missing python3 is an exit code of null.
 */
function pytest(args: string[], env: Record<string, string> = {}) {
  // No .pytest_cache nor __pycache__ left in the checkout, and none of the plugins the machine may
  // have installed (one writes a .benchmarks directory): the same run on every machine.
  const child = spawn('python3', ['-m', 'pytest', '-p', 'no:cacheprovider', ...args], {
    cwd: ROOT,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1', ...env },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on('error', (err) => resolve({ code: null, output: `python3 could not be started: ${err.message}` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the Python client (clients/python)', () => {
  it('has python3 and pytest to be tested with', async () => {
    const run = await pytest(['--version']);
    expect(run.code, failure(run)).toBe(0);
  });

  it('passes its tests against a live server, the snippets of its README and docs/python.md included', async () => {
    const run = await pytest(['-q', join('clients', 'python', 'tests')], { ORGMEM_URL: server.url, ORGMEM_API_KEY: tenant.key });
    expect(run.code, failure(run)).toBe(0);
    // Every test ran and passed: the summary counts no test skipped, deselected or expected to fail.
    const summary = /^(\d+) passed(, \d+ warnings?)? in /m.exec(run.output);
    expect(summary, run.output).not.toBeNull();
    expect(Number(summary![1])).toBeGreaterThanOrEqual(45);
  }, 300_000);
});
