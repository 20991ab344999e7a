import { describe, expect, it } from 'vitest';
import { newTenant, shared } from './support/client.ts';

describe('smoke', () => {
  it('stores and reads back a memory', async () => {
    const { url, adminKey } = shared();
    const t = await newTenant(url, adminKey);
    const created = await t.api('POST', '/v1/memory/collections/notes/memories', { text: 'hello world' });
    expect(created.status).toBe(201);
    const got = await t.api('GET', `/v1/memory/collections/notes/memories/${created.body.id}`);
    expect(got.body.text).toBe('hello world');
  });
});
