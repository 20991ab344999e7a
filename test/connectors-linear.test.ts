import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import { linear } from '../src/services/connectors/providers/linear.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { startLinearFake } from './fakes/providers/linear.ts';

let fake: ProviderFake;
beforeEach(async () => {
  fake = await startLinearFake();
});
afterEach(() => fake.close());

async function sync(cursor: string | null, credentials = fake.connection().credentials): Promise<ConnectorRecord[]> {
  const out: ConnectorRecord[] = [];
  for await (const page of linear.pages({
    credentials: linear.credentials.parse(credentials),
    config: linear.config.parse(fake.connection().config),
    cursor,
    apiUrl: fake.url,
    http: providerHttp('linear', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    readFile: async (f) => f.data.toString('utf8'),
  })) {
    out.push(...page);
  }
  return out;
}

const maxCursor = (records: ConnectorRecord[]) => records.map((r) => r.cursor).reduce((a, b) => (a > b ? a : b));

describe('linear connector', () => {
  it('reads every issue across pages, newest-updated first, with the documented request', async () => {
    for (let i = 1; i <= 5; i++) fake.put({ title: `Task ${i}`, body: `Body ${i}` });
    const records = await sync(null);
    expect(records.map((r) => r.text.split('\n')[0])).toEqual(['ENG-5 Task 5', 'ENG-4 Task 4', 'ENG-3 Task 3', 'ENG-2 Task 2', 'ENG-1 Task 1']);
    // five issues, two a page: three requests, each following the previous endCursor
    expect(fake.requests).toHaveLength(3);
    const bodies = fake.requests.map((r) => JSON.parse(r.body) as { variables: { after: string | null; filter?: unknown } });
    expect(bodies[0]!.variables.after).toBeNull();
    expect(bodies[1]!.variables.after).toEqual(expect.any(String));
    expect(bodies[0]!.variables.filter).toBeUndefined();
    expect(fake.requests[0]!.headers.authorization).toBe(fake.connection().credentials.token);
  });

  it('maps an issue to a record', async () => {
    const put = fake.put({ title: 'Login fails on Safari', body: 'Steps: open the login page.', author: 'Carla Dias' });
    const [r] = await sync(null);
    expect(r).toEqual({
      id: put.id,
      text: 'ENG-1 Login fails on Safari\nSteps: open the login page.\nState: In Progress · Assignee: Bruno Costa · Team: Engineering · Labels: bug, backend',
      url: 'https://linear.app/acme/issue/eng-1/login-fails-on-safari',
      author: 'Carla Dias',
      updated_at: new Date(put.updated).toISOString(),
      cursor: new Date(put.updated).toISOString(),
      extra: { identifier: 'ENG-1', state: 'In Progress', assignee: 'Bruno Costa', team: 'Engineering', labels: ['bug', 'backend'] },
    });
  });

  it('an incremental sync returns only issues created or changed after the cursor', async () => {
    const a = fake.put({ title: 'A', body: 'a' });
    fake.put({ title: 'B', body: 'b' });
    fake.put({ title: 'C', body: 'c' });
    const first = await sync(null);
    expect(first).toHaveLength(3);
    expect(await sync(maxCursor(first))).toEqual([]);
    fake.put({ id: a.id, title: 'A', body: 'a, edited' });
    const d = fake.put({ title: 'D', body: 'd' });
    const second = await sync(maxCursor(first));
    expect(second.map((r) => r.id)).toEqual([d.id, a.id]);
    expect(second[1]!.text).toContain('a, edited');
    const sent = JSON.parse(fake.requests.at(-1)!.body) as { variables: { filter: unknown } };
    expect(sent.variables.filter).toEqual({ updatedAt: { gt: maxCursor(first) } });
  });

  it('waits for Retry-After on a 429 and retries a 500', async () => {
    fake.put({ title: 'A', body: 'a' });
    fake.failNext(429);
    const started = Date.now();
    expect(await sync(null)).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    fake.failNext(500);
    expect(await sync(null)).toHaveLength(1);
    expect(fake.requests).toHaveLength(4);
  });

  it('a wrong key fails with Linear’s own message', async () => {
    fake.put({ title: 'A', body: 'a' });
    const err = await sync(null, { token: 'lin_api_wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toContain('Authentication required, not authenticated');
    expect((err as ProviderError).status).toBe(400);
  });

  it('a GraphQL error answered with HTTP 200 fails the sync too', async () => {
    // Linear answers some errors (here: `first` over 250) with 200 and `errors`; the request is
    // bent on its way to the fake to get one.
    const real = providerHttp('linear', OPEN, { tries: 1, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 });
    const records = linear.pages({
      credentials: linear.credentials.parse(fake.connection().credentials),
      config: {},
      cursor: null,
      apiUrl: fake.url,
      http: {
        ...real,
        json: (url, init) => {
          const body = init?.body as { variables: Record<string, unknown> };
          return real.json(url, { ...init, body: { ...body, variables: { ...body.variables, first: 500 } } });
        },
      },
      readFile: async () => '',
    });
    const err = await records[Symbol.asyncIterator]()
      .next()
      .catch((e: unknown) => e);
    expect(fake.requests).toHaveLength(1);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toBe('linear: Argument Validation Error');
  });

  it('requires a token', () => {
    const parsed = linear.credentials.safeParse({});
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['token']);
    expect(linear.config.parse({ sync_interval_minutes: 15 })).toEqual({ sync_interval_minutes: 15 });
  });
});
