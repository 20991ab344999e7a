import { randomBytes } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { closeApp, createApp } from '../host/app.ts';
import { loadConfig } from '../src/core/config.ts';
import { createTenant } from '../src/services/access/tenants.ts';
import { call, newTenant, shared } from './support/client.ts';
import { closedPort } from './support/closed-port.ts';
import { exercise, expectProblem, hostEnv, spawnMcp, tempDirs, type ToolResult } from './support/mcp.ts';
import { spawnServe } from './support/serve.ts';
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
const WRONG_KEY = `mv_${'x'.repeat(43)}`;
/** Where every fix is made: the MCP client gives orgmem mcp this environment only. */
const IN_ENV = 'in the "env" of this MCP server in your MCP client\'s config';

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

  it(
    'serves the tools from a working directory of its own',
    async () => {
      await withMcp({ ...data, ORGMEM_API_KEY: key }, async (client) => {
        expect(client.getInstructions()).toMatch(/call search_memory/);
        await exercise(client);
      });
    },
    SLOW,
  );

  it(
    'without ORGMEM_API_KEY: the client is told to set it',
    async () => {
      await withMcp(data, (client) => expectProblem(client, /ORGMEM_API_KEY is not set\. Fix: add "ORGMEM_API_KEY"/));
    },
    SLOW,
  );

  it(
    'with a key of other data: the client is told which data was opened and how to fix it',
    async () => {
      const where = PG ? 'the PostgreSQL database of DATABASE_URL' : data.ORGMEM_DATA_DIR;
      const fix = PG ? 'point DATABASE_URL at the database' : 'set ORGMEM_DATA_DIR to the data directory';
      await withMcp({ ...data, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(client, new RegExp(`ORGMEM_API_KEY is not a key of .*${where}.*401: Invalid or revoked API key.*Fix: ${IN_ENV}, ${fix}`)),
      );
    },
    SLOW,
  );

  it(
    'with a master key that cannot open the stored secrets: the client is told which key to use',
    async () => {
      await withMcp({ ...data, ORGMEM_API_KEY: key, ORGMEM_MASTER_KEY: randomBytes(32).toString('base64') }, (client) =>
        expectProblem(client, /master key \(ORGMEM_MASTER_KEY\) cannot decrypt the secrets stored in this database.*Start every orgmem process/),
      );
    },
    SLOW,
  );
});

describe.skipIf(PG)('orgmem mcp, local, on embedded data: the settings that choose it, and the running server that holds it', () => {
  it(
    'with a data directory set in the shell only: the client is told it opened the default one, and to set ORGMEM_DATA_DIR in its config',
    async () => {
      // The data is in the default directory of HOME, and the key is of other data.
      const home = dirs.make('orgmem-mcp-home-');
      const app = await createApp(loadConfig(hostEnv({ HOME: home })), { log: pino({ level: 'silent' }) });
      await closeApp(app);
      const dataDir = join(home, '.local', 'share', 'orgmem');
      await withMcp({ HOME: home, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(
          client,
          new RegExp(
            `orgmem is not available: ORGMEM_API_KEY is not a key of the data in ${dataDir} \\(401: Invalid or revoked API key\\)\\. ` +
              `That is the default data directory: your MCP client starts orgmem mcp with a clean environment, not your shell's, so ORGMEM_DATA_DIR ` +
              `set in your shell does not reach it\\. Fix: ${IN_ENV}, set ORGMEM_DATA_DIR to the data directory of the orgmem serve that issued ` +
              "the key .*, or set ORGMEM_URL to that server's address, or set ORGMEM_API_KEY to a key of this data",
          ),
        ),
      );
    },
    SLOW,
  );

  it(
    'where there is no data: the client is told where it looked and which setting to fix, and nothing is made there',
    async () => {
      const home = dirs.make('orgmem-mcp-home-');
      await withMcp({ HOME: home, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(
          client,
          new RegExp(
            `There is no orgmem data in ${join(home, '.local', 'share', 'orgmem')}\\. That is the default data directory: .*clean environment.*` +
              `Fix: ${IN_ENV}, set ORGMEM_DATA_DIR to the data directory of the orgmem serve that issued the key`,
          ),
        ),
      );
      expect(readdirSync(home)).toEqual([]);
      const empty = dirs.make('orgmem-mcp-data-');
      await withMcp({ ORGMEM_DATA_DIR: empty, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(
          client,
          new RegExp(`There is no orgmem data in ${empty}\\. That is the directory ORGMEM_DATA_DIR names\\. Fix: ${IN_ENV}, set ORGMEM_DATA_DIR`),
        ),
      );
      expect(readdirSync(empty)).toEqual([]);
    },
    SLOW,
  );

  describe('while orgmem serve holds the directory', () => {
    let data: Record<string, string>;
    let key: string;
    let url: string;
    let running: ReturnType<typeof spawnServe>;

    beforeAll(async () => {
      ({ env: data, key } = await embeddedData());
      // On a port of its own, as any non-default setting makes it: orgmem mcp finds it in the directory's server.json.
      running = spawnServe(hostEnv({ ...data, ORGMEM_LOG_LEVEL: 'info' }), cwd());
      ({ url } = await running.ready.catch(async (e) => (await running.stop(), Promise.reject(e))));
    }, SLOW);
    afterAll(() => running?.stop());

    it(
      'goes through that server, wherever it listens',
      async () => {
        await withMcp({ ...data, ORGMEM_API_KEY: key }, async (client) => {
          const stored = (await client.callTool({ name: 'store_memory', arguments: { collection: 'held', text: 'Stored through the server' } })) as ToolResult;
          expect(stored.isError).toBeFalsy();
        });
        const listed = await call(url, 'GET', '/v1/memory/collections/held/memories', { key });
        expect(listed.body.map((m: { text: string }) => m.text)).toEqual(['Stored through the server']);
      },
      SLOW,
    );

    it(
      "with a key the server refuses: the client is told it is not a key of this directory's data, and which settings to fix",
      async () => {
        await withMcp({ ...data, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
          expectProblem(
            client,
            new RegExp(
              `ORGMEM_API_KEY is not a key of the data in ${data.ORGMEM_DATA_DIR} \\(401: Invalid or revoked API key; asked the orgmem serve at ` +
                `${url} that holds it\\)\\. That is the directory ORGMEM_DATA_DIR names\\. Fix: ${IN_ENV}, set ORGMEM_DATA_DIR to`,
            ),
          ),
        );
      },
      SLOW,
    );
  });

  describe('while another process holds the directory', () => {
    let data: Record<string, string>;
    let key: string;
    beforeAll(async () => {
      ({ env: data, key } = await embeddedData());
      // This test's own process, alive, holds the directory as orgmem mcp would: the lock names it.
      writeFileSync(join(data.ORGMEM_DATA_DIR!, 'orgmem.lock'), String(process.pid));
    });

    it(
      'that is not a server: the client is told to stop it or to set ORGMEM_URL',
      async () => {
        await withMcp({ ...data, ORGMEM_API_KEY: key }, (client) =>
          expectProblem(
            client,
            new RegExp(
              `The data directory ${data.ORGMEM_DATA_DIR} is in use by another orgmem process \\(pid ${process.pid}\\), which is not an orgmem serve ` +
                `to go through .*Fix: stop that process, or set ORGMEM_URL ${IN_ENV} to the address of the orgmem serve that uses this directory`,
            ),
          ),
        );
      },
      SLOW,
    );

    it(
      'that is a server which does not answer: the client is told which process to restart',
      async () => {
        const port = await closedPort();
        writeFileSync(
          join(data.ORGMEM_DATA_DIR!, 'server.json'),
          JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid, secret: 'x'.repeat(43) }),
        );
        await withMcp({ ...data, ORGMEM_API_KEY: key }, (client) =>
          expectProblem(
            client,
            new RegExp(
              `No orgmem server answers at http://127.0.0.1:${port} \\(ECONNREFUSED\\)\\. Fix: the orgmem serve that holds ${data.ORGMEM_DATA_DIR} ` +
                `\\(pid ${process.pid}\\) wrote http://127.0.0.1:${port} as its address: restart it, or stop it`,
            ),
          ),
        );
      },
      SLOW,
    );
  });
});

describe('orgmem mcp, remote: a bridge to a running server (ORGMEM_URL)', () => {
  const { url, adminKey } = shared();

  it(
    "serves the server's tools, resources and prompts, from a working directory of its own",
    async () => {
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
    },
    SLOW,
  );

  it(
    "with a key the server refuses: the client gets the server's reason and the fix",
    async () => {
      await withMcp({ ORGMEM_URL: url, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(
          client,
          new RegExp(`\\(ORGMEM_URL\\) refused ORGMEM_API_KEY \\(401: Invalid or revoked API key\\)\\. Fix: set ORGMEM_API_KEY ${IN_ENV} to a key`),
        ),
      );
    },
    SLOW,
  );

  it(
    'when no server answers: the client is told where it looked and how to fix it',
    async () => {
      const port = await closedPort();
      await withMcp({ ORGMEM_URL: `http://127.0.0.1:${port}`, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(
          client,
          new RegExp(
            `No orgmem server answers at http://127.0.0.1:${port} \\(ECONNREFUSED\\)\\. Fix: start it \\(orgmem serve\\), or correct ORGMEM_URL ${IN_ENV}`,
          ),
        ),
      );
    },
    SLOW,
  );

  it(
    'with an ORGMEM_URL that is not an http(s) address, or not of an orgmem server: the client is told to correct ORGMEM_URL in its config',
    async () => {
      await withMcp({ ORGMEM_URL: 'localhost:8080', ORGMEM_API_KEY: WRONG_KEY }, (client) =>
        expectProblem(client, new RegExp(`ORGMEM_URL is not an http\\(s\\) URL: "localhost:8080"\\. Fix: set ORGMEM_URL ${IN_ENV} to the server's address`)),
      );
      const other = createHttpServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('Not here'));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const port = (other.address() as AddressInfo).port;
      try {
        await withMcp({ ORGMEM_URL: `http://127.0.0.1:${port}`, ORGMEM_API_KEY: WRONG_KEY }, (client) =>
          expectProblem(
            client,
            new RegExp(
              `The server at http://127.0.0.1:${port}/v1/mcp answered 404: .*which an orgmem server does not\\. Fix: start it \\(orgmem serve\\), or correct ORGMEM_URL ${IN_ENV}`,
            ),
          ),
        );
      } finally {
        other.close();
      }
    },
    SLOW,
  );

  it(
    'when the server comes up after the host connected, the next request reaches it',
    async () => {
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
    },
    SLOW,
  );
});
