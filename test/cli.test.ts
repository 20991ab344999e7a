import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from './support/client.ts';

const bin = join(import.meta.dirname, '..', 'bin', 'orgmem.js');

/** Starts `orgmem serve` and resolves once it listens, with everything it printed so far. */
function serve(dir: string) {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-worker'], {
    env: { ...process.env, DATABASE_URL: '', ORGMEM_DATA_DIR: dir, ORGMEM_EMBEDDER: 'hash', ORGMEM_LOG_LEVEL: 'info' },
  });
  let out = '';
  const ready = new Promise<{ out: string; url: string }>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /orgmem listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve({ out, url: m[1]! });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
  const stop = () => new Promise<void>((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM'))));
  return { ready, stop };
}

describe('orgmem serve on an empty embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orgmem-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates an admin tenant once, prints its key with how to use it, and serves', async () => {
    const first = serve(dir);
    const { out, url } = await first.ready;
    const key = /(mv_[A-Za-z0-9_-]{43})/.exec(out)?.[1];
    expect(key).toBeDefined();
    expect(out).toContain(`curl -H "Authorization: Bearer ${key}" ${url}/v1/memory/collections`);
    const me = await call(url, 'GET', '/v1/memory/admin/me', { key });
    expect(me.body).toMatchObject({ name: 'admin', is_admin: true });
    await first.stop();

    const second = serve(dir);
    const again = await second.ready;
    expect(again.out).not.toMatch(/mv_/);
    expect((await call(again.url, 'GET', '/v1/memory/admin/me', { key })).status).toBe(200);
    await second.stop();
  }, 120_000);
});
