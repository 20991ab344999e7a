import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';

const { url, adminKey } = shared();
const C = '/v1/memory/collections';
let t: Tenant;

beforeAll(async () => {
  t = await newTenant(url, adminKey);
});

describe('collections', () => {
  it('create, get, update, list and delete', async () => {
    const created = await t.api('POST', C, { name: 'projects', description: 'Project notes', metadata: { team: 'core' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'projects', description: 'Project notes', metadata: { team: 'core' }, memory_count: 0, restricted: false });
    expect((await t.api('GET', `${C}/projects`)).body).toEqual(created.body);

    const updated = await t.api('PUT', `${C}/projects`, { description: 'All project notes' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ description: 'All project notes', metadata: { team: 'core' } });

    await t.api('POST', `${C}/projects/memories`, { text: 'kickoff on Monday' });
    const list = await t.api('GET', C);
    expect(list.body).toEqual([expect.objectContaining({ name: 'projects', memory_count: 1 })]);

    const mem = (await t.api('GET', `${C}/projects/memories`)).body[0];
    expect((await t.api('DELETE', `${C}/projects`)).status).toBe(204);
    expect((await t.api('GET', `${C}/projects`)).status).toBe(404);
    expect((await t.api('GET', `${C}/projects/memories/${mem.id}`)).status).toBe(404);
    expect((await t.api('GET', C)).body).toEqual([]);
  });

  it('creating an existing name is 409', async () => {
    expect((await t.api('POST', C, { name: 'twice' })).status).toBe(201);
    const again = await t.api('POST', C, { name: 'twice' });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already exists/);
  });

  it('unknown collections are 404 on get, put and delete', async () => {
    expect((await t.api('GET', `${C}/nope`)).status).toBe(404);
    expect((await t.api('PUT', `${C}/nope`, { description: 'x' })).status).toBe(404);
    expect((await t.api('DELETE', `${C}/nope`)).status).toBe(404);
  });

  it.each([['empty', ''], ['leading dot', '.x'], ['space', 'a b'], ['slash-free unicode', 'café'], ['65 characters', 'a'.repeat(65)]])(
    'a name with %s is 422',
    async (_label, name) => {
      const res = await t.api('POST', C, { name });
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe('name');
    },
  );

  it('metadata must be an object', async () => {
    expect((await t.api('POST', C, { name: 'meta', metadata: 'no' })).status).toBe(422);
  });

  it('another tenant sees none of it', async () => {
    await t.api('POST', C, { name: 'private' });
    const other = await newTenant(url, adminKey);
    expect((await other.api('GET', C)).body).toEqual([]);
    expect((await other.api('GET', `${C}/private`)).status).toBe(404);
    expect((await other.api('DELETE', `${C}/private`)).status).toBe(404);
    expect((await t.api('GET', `${C}/private`)).status).toBe(200);
  });
});
