import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { closeApp, createApp } from '../host/app.ts';
import { loadConfig } from '../src/core/config.ts';
import { hashEmbedder } from '../src/ports/embedder/hash.ts';
import { MasterKeyMismatchError } from '../src/ports/secrets.ts';
import { startServer } from './support/server.ts';

const silent = pino({ level: 'silent' });

describe('the master key', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'orgmem-key-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is checked at start: a key that cannot open the stored secrets is refused with the fix, before anything runs', async () => {
    // PostgreSQL: the database of a test server, whose key lives only as long as its process.
    // Embedded: a data directory, which holds the database and the generated key file both.
    const server = process.env.TEST_DATABASE_URL ? await startServer({}, { worker: false }) : undefined;
    const dataDir = tempDir();
    const env: Record<string, string> = { ORGMEM_DATA_DIR: dataDir, DATABASE_URL: server?.app.config.databaseUrl ?? '' };
    const open = (extra: Record<string, string> = {}) => createApp(loadConfig({ ...env, ...extra }), { embedder: hashEmbedder(512), log: silent });
    const recorded = async (app: Awaited<ReturnType<typeof open>>) =>
      (await app.db.query<{ n: number }>(`select count(*)::int as n from settings where key = 'master_key_check'`))[0]!.n;
    try {
      // A key made for one process never becomes the database's key.
      if (server) expect(await recorded(server.app)).toBe(0);

      // First start: a key file is generated in the data directory and the database records it.
      const first = await open();
      expect(await recorded(first)).toBe(1);
      const fileKey = readFileSync(join(dataDir, 'master.key'), 'utf8');
      const tenant = '01900000-0000-7000-8000-00000000cccc';
      await first.db.query(`insert into tenants (id, name, email) values ($1, 'k', 'k@x.test')`, [tenant]);
      await first.db.query(`insert into webhooks (tenant_id, url, secret_sealed) values ($1, 'https://example.com/hook', $2)`, [
        tenant,
        first.secrets.encrypt('whsec'),
      ]);
      await closeApp(first);

      const wrong = randomBytes(32).toString('base64');
      const refused = open({ ORGMEM_MASTER_KEY: wrong });
      await expect(refused).rejects.toThrow(MasterKeyMismatchError);
      await expect(refused).rejects.toThrow(
        `The master key (ORGMEM_MASTER_KEY) cannot decrypt the secrets stored in this database, which was set up with another key. ` +
          `Start every orgmem process on this database with that key: in ORGMEM_MASTER_KEY (base64), or, with ORGMEM_MASTER_KEY unset, in ${join(dataDir, 'master.key')}.`,
      );

      // The same key given as ORGMEM_MASTER_KEY, as a deployment of several machines gives it, opens the secrets.
      const same = await open({ ORGMEM_MASTER_KEY: fileKey });
      const [hook] = await same.db.query<{ secret_sealed: string }>('select secret_sealed from webhooks');
      expect(same.secrets.decrypt(hook!.secret_sealed)).toBe('whsec');

      // A database from before the check records nothing yet: one of its stored secrets is tried instead.
      await same.db.query(`delete from settings where key = 'master_key_check'`);
      await closeApp(same);
      await expect(open({ ORGMEM_MASTER_KEY: wrong })).rejects.toThrow(MasterKeyMismatchError);
      const upgraded = await open();
      expect(await recorded(upgraded)).toBe(1);
      await closeApp(upgraded);
    } finally {
      await server?.close();
    }
    // Embedded, this opens PGlite five times (seconds each in WASM).
  }, 180_000);
});
