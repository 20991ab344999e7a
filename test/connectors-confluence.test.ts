import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import { confluence } from '../src/services/connectors/providers/confluence.ts';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { startConfluenceFake } from './fakes/providers/confluence.ts';

let fake: ProviderFake;
beforeEach(async () => {
  fake = await startConfluenceFake();
});
afterEach(() => fake.close());

async function sync(cursor: string | null, over: { credentials?: Record<string, unknown>; config?: Record<string, unknown> } = {}): Promise<ConnectorRecord[]> {
  const config = confluence.config.parse({ ...fake.connection().config, ...over.config });
  const out: ConnectorRecord[] = [];
  for await (const page of confluence.pages({
    credentials: confluence.credentials.parse(over.credentials ?? fake.connection().credentials),
    config,
    cursor,
    apiUrl: config.base_url,
    http: providerHttp('confluence', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    readFile: async (f) => f.data.toString('utf8'),
  })) {
    out.push(...page);
  }
  return out;
}

const maxCursor = (records: ConnectorRecord[]) => records.map((r) => r.cursor).reduce((a, b) => (a > b ? a : b));
const cqlOf = (i: number) => fake.requests[i]!.url.searchParams.get('cql');

describe('confluence connector', () => {
  it('reads every page across result pages, newest-modified first, following _links.next', async () => {
    for (let i = 1; i <= 5; i++) fake.put({ title: `Page ${i}`, body: `Body ${i}` });
    const records = await sync(null);
    expect(records.map((r) => r.text)).toEqual(['Page 5\nBody 5', 'Page 4\nBody 4', 'Page 3\nBody 3', 'Page 2\nBody 2', 'Page 1\nBody 1']);
    expect(fake.requests).toHaveLength(3);
    expect(cqlOf(0)).toBe('type=page order by lastmodified desc');
    expect(fake.requests[0]!.url.pathname).toBe('/wiki/rest/api/content/search');
    // later requests are the next links: the search cursor, under the /wiki context
    expect(fake.requests[1]!.url.pathname).toBe('/wiki/rest/api/content/search');
    expect(fake.requests[1]!.url.searchParams.get('cursor')).toEqual(expect.any(String));
    const basic = Buffer.from('ana@acme.test:ATATT-fake-api-token').toString('base64');
    expect(fake.requests.every((r) => r.headers.authorization === `Basic ${basic}`)).toBe(true);
  });

  it('maps a page to a record, storage format to plain text', async () => {
    fake.put({ title: 'Runbook', body: 'First line\nsecond line\n\nA new paragraph & more', author: 'Carla Dias' });
    const put = fake.put({ id: fake.records[0]!.id, title: 'Runbook', body: 'First line\nsecond line\n\nA new paragraph & more', author: 'Carla Dias' });
    const [r] = await sync(null);
    expect(r).toEqual({
      id: put.id,
      text: 'Runbook\nFirst line\nsecond line\n\nA new paragraph & more',
      url: `${fake.url}/wiki/spaces/ENG/pages/${put.id}/Runbook`,
      author: 'Carla Dias',
      updated_at: new Date(put.updated).toISOString(),
      cursor: new Date(put.updated).toISOString(),
      extra: { space_key: 'ENG', version: 2 },
    });
  });

  it('keeps the text of macros and drops their markup', async () => {
    fake.put({
      title: 'Deploy',
      body:
        '<h2>Steps</h2><p>Run <a href="https://x.test">the script</a>:</p>' +
        '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[make deploy && echo <ok>\nmake verify]]></ac:plain-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="info"><ac:rich-text-body><p>Ask #ops first.</p></ac:rich-text-body></ac:structured-macro>' +
        '<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>Tell QA</ac:task-body></ac:task></ac:task-list>' +
        '<ac:image><ri:attachment ri:filename="diagram.png" /></ac:image>',
    });
    const [r] = await sync(null);
    expect(r!.text).toBe('Deploy\nSteps\n\nRun the script:\n\nmake deploy && echo <ok>\nmake verify\n\nAsk #ops first.\n\nTell QA');
  });

  it('an incremental sync returns only pages created or changed after the cursor', async () => {
    const a = fake.put({ title: 'A', body: 'a' });
    fake.put({ title: 'B', body: 'b' });
    fake.put({ title: 'C', body: 'c' });
    const first = await sync(null);
    expect(first).toHaveLength(3);
    const cursor = maxCursor(first);
    fake.requests.length = 0;
    expect(await sync(cursor)).toEqual([]);
    // CQL has minutes in the user's zone: the query starts 12 hours early, the connector filters
    const since = new Date(Date.parse(cursor) - 12 * 3_600_000).toISOString().slice(0, 16).replace('T', ' ');
    expect(cqlOf(0)).toBe(`type=page and lastmodified >= "${since}" order by lastmodified desc`);
    // the first result page already reached the cursor: no further request
    expect(fake.requests).toHaveLength(1);
    fake.put({ id: a.id, title: 'A', body: 'a, edited' });
    const d = fake.put({ title: 'D', body: 'd' });
    const second = await sync(cursor);
    expect(second.map((r) => r.id)).toEqual([d.id, a.id]);
    expect(second[1]!.text).toBe('A\na, edited');
    expect(second[1]!.extra).toEqual({ space_key: 'ENG', version: 2 });
  });

  it('limits the search to the configured space', async () => {
    fake.put({ title: 'A', body: 'a' });
    expect(await sync(null, { config: { space_key: 'ENG' } })).toHaveLength(1);
    expect(cqlOf(0)).toBe('type=page and space="ENG" order by lastmodified desc');
    expect(await sync(null, { config: { space_key: 'HR' } })).toEqual([]);
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

  it('a wrong API token fails with Confluence’s own message', async () => {
    fake.put({ title: 'A', body: 'a' });
    const err = await sync(null, { credentials: { email: 'ana@acme.test', api_token: 'wrong' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).status).toBe(401);
    expect((err as ProviderError).message).toBe('confluence answered 401: Client must be authenticated to access this resource.');
  });

  it('checks credentials and config', () => {
    expect(confluence.credentials.safeParse({ email: 'a@b.c' }).error?.issues[0]?.path).toEqual(['api_token']);
    expect(confluence.config.safeParse({}).error?.issues[0]?.path).toEqual(['base_url']);
    // the API token goes out as Basic auth: never over plain http to another host
    expect(confluence.config.safeParse({ base_url: 'http://acme.atlassian.net' }).success).toBe(false);
    expect(confluence.config.safeParse({ base_url: 'not a url' }).error?.issues[0]?.path).toEqual(['base_url']);
    expect(confluence.config.safeParse({ base_url: 'ftp://acme.atlassian.net' }).success).toBe(false);
    expect(confluence.config.safeParse({ base_url: 'https://acme.atlassian.net', space_key: 'X" or type=blogpost' }).success).toBe(false);
    expect(confluence.config.parse({ base_url: 'https://acme.atlassian.net/wiki/', sync_interval_minutes: 30 })).toEqual({
      base_url: 'https://acme.atlassian.net',
      sync_interval_minutes: 30,
    });
  });
});
