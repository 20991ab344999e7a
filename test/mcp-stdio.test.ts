import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { closeApp, createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { App } from '../src/context.ts';
import { buildServer } from '../src/server.ts';
import { createTenant } from '../src/services/access/tenants.ts';
import { newTenant, shared } from './support/client.ts';
import { closedPort } from './support/closed-port.ts';
import { exercise, expectProblem, hostEnv, spawnMcp, tempDirs, type ToolResult } from './support/mcp.ts';
import { startServer, type TestServer } from './support/server.ts';

/**
 * `orgmem mcp` spawned as an MCP host spawns it: from a directory of its own, never the
 * project's, talking to the official SDK stdio client. Whatever keeps it from serving must
 * reach the client as words naming the fix, not as a closed pipe.
 */
const dirs = tempDirs();
afterAll(() => dirs.removeAll());
const cwd = () => dirs.make('orgmem-mcp-cwd-');
const PG = process.env.TEST_DATABASE_URL;
// Spawned processes open PGlite or PostgreSQL: seconds each, more on a busy machine.
const SLOW = 120_000;

/** Runs one session against `orgmem mcp` with `env` and closes it, whatever the test asserts. */
async function withMcp(env: Record<string, string>, fn: (client: Awaited<ReturnType<typeof spawnMcp>>['client']) => Promise<void>) {
  const { client, stderr } = await spawnMcp(env, cwd());
  try {
    await fn(client);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- orgmem mcp stderr ---\n${stderr()}`, { cause: err });
  } finally {
    await client.close();
  }
}

/** An embedded data directory with a tenant, made and released the way `orgmem admin create-tenant` does. */
async function embeddedData(): Promise<{ env: Record<string, string>; key: string }> {
  const env = { ORGMEM_DATA_DIR: dirs.make('orgmem-mcp-data-') };
  const app = await createApp(loadConfig(hostEnv(env)), { log: pino({ level: 'silent' }) });
  try {
    const { api_key } = await createTenant(app, { name: 'stdio', email: 'stdio@test.local' });
    return { env, key: api_key };
  } finally {
    await closeApp(app);
  }
}

describe('orgmem mcp, local: the process opens the data itself', () => {
  let data: Record<string, string>;
  let key: string;
  let server: TestServer | undefined;

  beforeAll(async () => {
    if (PG) {
      // PostgreSQL: the process shares the database (and its master key) with a running server.
      const masterKey = randomBytes(32).toString('base64');
      server = await startServer({ ORGMEM_MASTER_KEY: masterKey }, { worker: false });
      key = (await createTenant(server.app, { name: 'stdio', email: 'stdio@test.local' })).api_key;
      data = { DATABASE_URL: server.app.config.databaseUrl!, ORGMEM_MASTER_KEY: masterKey };
    } else ({ env: data, key } = await embeddedData());
  });
  afterAll(() => server?.close());

  it('serves the tools from a working directory of its own', async () => {
    await withMcp({ ...data, ORGMEM_API_KEY: key }, async (client) => {
      expect(client.getInstructions()).toMatch(/call search_memory/);
      await exercise(client);
    });
  }, SLOW);

  it('without ORGMEM_API_KEY: the client is told to set it', async () => {
    await withMcp(data, (client) => expectProblem(client, /ORGMEM_API_KEY is not set\. Fix: add "ORGMEM_API_KEY"/));
  }, SLOW);

  it('with a key of other data: the client is told which data was opened and how to fix it', async () => {
    const where = PG ? 'the PostgreSQL database of DATABASE_URL' : data.ORGMEM_DATA_DIR;
    await withMcp({ ...data, ORGMEM_API_KEY: `mv_${'x'.repeat(43)}` }, (client) =>
      expectProblem(client, new RegExp(`ORGMEM_API_KEY is not a key of .*${where}.*401: Invalid or revoked API key.*Fix: `)),
    );
  }, SLOW);

  it('with a master key that cannot open the stored secrets: the client is told which key to use', async () => {
    await withMcp({ ...data, ORGMEM_API_KEY: key, ORGMEM_MASTER_KEY: randomBytes(32).toString('base64') }, (client) =>
      expectProblem(client, /master key \(ORGMEM_MASTER_KEY\) cannot decrypt the secrets stored in this database.*Start every orgmem process/),
    );
  }, SLOW);
});

describe.skipIf(PG)('orgmem mcp, local, while a running server holds the embedded directory', () => {
  let data: Record<string, string>;
  let key: string;
  let app: App;
  let stop: () => Promise<void>;
  let port: number;

  beforeAll(async () => {
    ({ env: data, key } = await embeddedData());
    app = await createApp(loadConfig(hostEnv(data)), { log: pino({ level: 'silent' }) });
    const http = await buildServer(app);
    await http.listen({ host: '127.0.0.1', port: 0 });
    port = (http.server.address() as AddressInfo).port;
    stop = async () => {
      await http.close();
      await closeApp(app);
    };
  });
  afterAll(() => stop());

  it('goes through that server when it answers where this configuration serves (HOST, PORT)', async () => {
    await withMcp({ ...data, ORGMEM_API_KEY: key, PORT: String(port) }, async (client) => {
      const stored = (await client.callTool({ name: 'store_memory', arguments: { collection: 'held', text: 'Stored through the server' } })) as ToolResult;
      expect(stored.isError).toBeFalsy();
    });
    const [row] = await app.db.query<{ text: string }>(`select text from memories where text = 'Stored through the server'`);
    expect(row?.text).toBe('Stored through the server');
  }, SLOW);

  it('otherwise tells the client the directory is in use and how to reach the server', async () => {
    const elsewhere = await closedPort();
    await withMcp({ ...data, ORGMEM_API_KEY: key, PORT: String(elsewhere) }, (client) =>
      expectProblem(client, new RegExp(`is in use by another orgmem process .*No orgmem server answers at http://127.0.0.1:${elsewhere}.*Fix: set ORGMEM_URL`)),
    );
  }, SLOW);
});

describe('orgmem mcp, remote: a bridge to a running server (ORGMEM_URL)', () => {
  const { url, adminKey } = shared();

  it('serves the server\'s tools, resources and prompts, from a working directory of its own', async () => {
    const t = await newTenant(url, adminKey);
    await withMcp({ ORGMEM_URL: url, ORGMEM_API_KEY: t.key }, async (client) => {
      expect(client.getInstructions()).toMatch(/call search_memory/);
      const id = await exercise(client);
      const memory = await client.readResource({ uri: `orgmem://collections/mcp/memories/${id}` });
      expect((memory.contents[0] as { text: string }).text).toContain('standup is at 9:30');
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('recall');
    });
    // The bridge acts as the key: what it stored is the tenant's, over REST too.
    expect((await t.api('GET', '/v1/memory/collections/mcp/memories')).body).toHaveLength(1);
  }, SLOW);

  it('with a key the server refuses: the client gets the server\'s reason and the fix', async () => {
    await withMcp({ ORGMEM_URL: url, ORGMEM_API_KEY: `mv_${'x'.repeat(43)}` }, (client) =>
      expectProblem(client, /refused ORGMEM_API_KEY \(401: Invalid or revoked API key\)\. Fix: set ORGMEM_API_KEY/),
    );
  }, SLOW);

  it('when no server answers: the client is told where it looked and how to fix it', async () => {
    const port = await closedPort();
    await withMcp({ ORGMEM_URL: `http://127.0.0.1:${port}`, ORGMEM_API_KEY: `mv_${'x'.repeat(43)}` }, (client) =>
      expectProblem(client, new RegExp(`No orgmem server answers at http://127.0.0.1:${port} \\(ECONNREFUSED\\)\\. Fix: start it`)),
    );
  }, SLOW);

  it('when the server comes up after the host connected, the next request reaches it', async () => {
    const t = await newTenant(url, adminKey);
    const port = await closedPort();
    await withMcp({ ORGMEM_URL: `http://127.0.0.1:${port}`, ORGMEM_API_KEY: t.key }, async (client) => {
      await expect(client.listTools()).rejects.toThrow(/No orgmem server answers/);
      // The server "starts" on that port: a TCP relay to the running one.
      const target = new URL(url);
      const relay = createServer((socket) => socket.pipe(connect(Number(target.port), target.hostname)).pipe(socket));
      await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('search_memory');
      } finally {
        relay.close();
      }
    });
  }, SLOW);
});
