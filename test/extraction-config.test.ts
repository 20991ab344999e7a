import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from './fakes/openai.ts';
import { newTenant } from './support/client.ts';
import { startServer, type TestServer } from './support/server.ts';
import { closedPort } from './support/closed-port.ts';

let fake: FakeLlm;
let server: TestServer;
const PATH = '/v1/memory/extraction/config';

beforeAll(async () => {
  fake = await startFakeLlm({ apiKey: 'sk-good' });
  server = await startServer();
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe('extraction config', () => {
  it('saves after a passing 1-token self-test, seals the key and never returns it', async () => {
    const t = await newTenant(server.url, server.adminKey);
    expect((await t.api('GET', PATH)).body).toMatchObject({ configured: false, base_url: null, api_key_set: false, source: 'none' });
    const before = fake.callsNamed('plain').length;
    const put = await t.api('PUT', PATH, { provider: 'custom', base_url: `${fake.url}/`, model: 'own-model', api_key: 'sk-good' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ configured: true, provider: 'custom', base_url: fake.url, model: 'own-model', api_key_set: true, source: 'tenant' });
    expect(JSON.stringify(put.body)).not.toContain('sk-good');
    expect(JSON.stringify((await t.api('GET', PATH)).body)).not.toContain('sk-good');

    const tests = fake.callsNamed('plain').slice(before);
    expect(tests).toHaveLength(1);
    expect(tests[0]!.body.max_tokens).toBe(1);
    expect(tests[0]!.body.response_format).toBeUndefined();
    expect(tests[0]!.body.model).toBe('own-model');

    const [row] = await server.app.db.query<{ api_key_sealed: string }>('select api_key_sealed from extraction_configs where tenant_id = $1', [t.id]);
    expect(row!.api_key_sealed).not.toContain('sk-good');
    expect(server.app.secrets.decrypt(row!.api_key_sealed)).toBe('sk-good');
    const usage = await server.app.db.query('select purpose, source from llm_usage where tenant_id = $1', [t.id]);
    expect(usage).toEqual([{ purpose: 'self_test', source: 'tenant' }]);
  });

  it('a failing self-test is a 400 with the reason and saves nothing', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const ok = { provider: 'custom', base_url: fake.url, model: 'own-model', api_key: 'sk-good' };
    expect((await t.api('PUT', PATH, ok)).status).toBe(200);

    const badKey = await t.api('PUT', PATH, { ...ok, model: 'other-model', api_key: 'sk-wrong' });
    expect(badKey.status).toBe(400);
    expect(badKey.body.detail).toContain('401 Incorrect API key provided');
    const refused = await t.api('PUT', PATH, { ...ok, base_url: `http://127.0.0.1:${await closedPort()}/v1` });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain('ECONNREFUSED');
    fake.script('plain', { status: 500, message: 'backend down' });
    const broken = await t.api('PUT', PATH, ok);
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toContain('500 backend down');
    // The earlier, working config is untouched.
    expect((await t.api('GET', PATH)).body).toMatchObject({ configured: true, model: 'own-model', base_url: fake.url });
  });

  it('a key can be left out, and DELETE reverts to the default', async () => {
    const keyless = await startFakeLlm();
    try {
      const t = await newTenant(server.url, server.adminKey);
      const put = await t.api('PUT', PATH, { base_url: keyless.url, model: 'local' });
      expect(put.body).toMatchObject({ configured: true, provider: 'custom', api_key_set: false });
      expect((await t.api('DELETE', PATH)).status).toBe(204);
      expect((await t.api('GET', PATH)).body).toMatchObject({ configured: false, source: 'none' });
      expect((await t.api('DELETE', PATH)).status).toBe(204);
    } finally {
      await keyless.close();
    }
  });

  it('validates the body and refuses read-only keys', async () => {
    const t = await newTenant(server.url, server.adminKey);
    const ok = { provider: 'custom', base_url: fake.url, model: 'm', api_key: 'sk-good' };
    for (const bad of [
      { ...ok, provider: 'openai' },
      { ...ok, base_url: 'not a url' },
      { ...ok, base_url: 'ftp://127.0.0.1/v1' },
      { ...ok, model: '' },
      { base_url: fake.url },
    ]) {
      const res = await t.api('PUT', PATH, bad);
      expect(res.status, JSON.stringify(bad)).toBe(422);
    }
    const ro = await t.newKey('reader', true);
    expect((await t.api('GET', PATH, undefined, ro.key)).status).toBe(200);
    expect((await t.api('PUT', PATH, ok, ro.key)).status).toBe(403);
    expect((await t.api('DELETE', PATH, undefined, ro.key)).status).toBe(403);
    expect((await t.api('GET', PATH, undefined, 'mv_nope')).status).toBe(401);
  });
});

describe('extraction config in production mode', () => {
  it('refuses a loopback endpoint before calling it, unless the operator allows private targets', async () => {
    const strict = await startServer({ ORGMEM_PRODUCTION: '1' }, { worker: false });
    const lenient = await startServer({ ORGMEM_PRODUCTION: '1', ORGMEM_WEBHOOK_ALLOW_PRIVATE: '1' }, { worker: false });
    try {
      const body = { provider: 'custom', base_url: fake.url, model: 'm', api_key: 'sk-good' };
      const before = fake.calls.length;
      const t = await newTenant(strict.url, strict.adminKey);
      const refused = await t.api('PUT', PATH, body);
      expect(refused.status).toBe(400);
      expect(refused.body.detail).toMatch(/not allowed.*127\.0\.0\.1/);
      expect(fake.calls.length).toBe(before);
      expect((await t.api('GET', PATH)).body.base_url).toBeNull();
      const allowed = await newTenant(lenient.url, lenient.adminKey);
      expect((await allowed.api('PUT', PATH, body)).status).toBe(200);
    } finally {
      await strict.close();
      await lenient.close();
    }
  }, 120_000);
});
