import { afterEach, describe, expect, it } from 'vitest';
import { ProviderError, providerHttp } from '../src/services/connectors/http.ts';
import { OPEN } from './support/targets.ts';
import type { ConnectorRecord } from '../src/services/connectors/providers/connector.ts';
import { hubspot } from '../src/services/connectors/providers/hubspot.ts';
import type { ProviderFake } from './fakes/providers/base.ts';
import { startHubspotFake } from './fakes/providers/hubspot.ts';

let fake: ProviderFake;
afterEach(() => fake.close());

async function sync(cursor: string | null, credentials = fake.connection().credentials): Promise<ConnectorRecord[]> {
  const out: ConnectorRecord[] = [];
  for await (const page of hubspot.pages({
    credentials: hubspot.credentials.parse(credentials),
    config: hubspot.config.parse(fake.connection().config),
    cursor,
    apiUrl: fake.url,
    http: providerHttp('hubspot', OPEN, { tries: 5, backoffMs: 20, maxWaitMs: 5_000, timeoutMs: 5_000 }),
    readFile: async (f) => f.data.toString('utf8'),
  })) {
    out.push(...page);
  }
  return out;
}

type Search = {
  filterGroups: Array<{ filters: Array<{ propertyName: string; operator: string; value: string }> }>;
  sorts: unknown;
  after?: string;
  limit: number;
};
const searches = () => fake.requests.filter((r) => r.url.pathname === '/crm/v3/objects/contacts/search').map((r) => JSON.parse(r.body) as Search);
const maxCursor = (records: ConnectorRecord[]) => records.map((r) => r.cursor).reduce((a, b) => (a > b ? a : b));

describe('hubspot connector', () => {
  it('reads every contact across pages, oldest-modified first, each page a query from the last date read', async () => {
    fake = await startHubspotFake();
    const put = [1, 2, 3, 4, 5].map((i) => fake.put({ title: `Person ${i}`, body: `Note ${i}` }));
    const records = await sync(null);
    expect(records.map((r) => r.id)).toEqual(put.map((p) => p.id));
    const sent = searches();
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatchObject({ filterGroups: [], sorts: [{ propertyName: 'lastmodifieddate', direction: 'ASCENDING' }], limit: 200 });
    expect(sent[0]!.after).toBeUndefined();
    // the next query starts at the second contact's date and skips the one contact read on it
    expect(sent[1]!.filterGroups).toEqual([{ filters: [{ propertyName: 'lastmodifieddate', operator: 'GTE', value: String(put[1]!.updated) }] }]);
    expect(sent[1]!.after).toBe('1');
    expect(fake.requests.every((r) => r.headers.authorization === 'Bearer pat-na1-fake-token')).toBe(true);
  });

  it('maps a contact to a record', async () => {
    fake = await startHubspotFake();
    const put = fake.put({ title: 'Maria da Silva', body: 'Met at the Lisbon fair.\nWants a demo in May.' });
    const [r] = await sync(null);
    expect(r).toEqual({
      id: put.id,
      text: 'Maria da Silva\nEmail: maria.da.silva@acme.test\nCompany: Acme\nJob title: Buyer\nPhone: +351 210 000 000\nLifecycle stage: lead\nMet at the Lisbon fair.\nWants a demo in May.',
      url: `https://app-eu1.hubspot.com/contacts/4821337/record/0-1/${put.id}`,
      author: null,
      updated_at: new Date(put.updated).toISOString(),
      cursor: new Date(put.updated).toISOString(),
      extra: { email: 'maria.da.silva@acme.test', company: 'Acme' },
    });
  });

  it('an incremental sync returns only contacts created or changed after the cursor', async () => {
    fake = await startHubspotFake();
    const a = fake.put({ title: 'Ana A', body: 'a' });
    fake.put({ title: 'Bia B', body: 'b' });
    fake.put({ title: 'Caio C', body: 'c' });
    const first = await sync(null);
    expect(first).toHaveLength(3);
    const cursor = maxCursor(first);
    expect(await sync(cursor)).toEqual([]);
    expect(searches().at(-1)!.filterGroups).toEqual([{ filters: [{ propertyName: 'lastmodifieddate', operator: 'GT', value: String(Date.parse(cursor)) }] }]);
    fake.put({ id: a.id, title: 'Ana A', body: 'a, edited' });
    const d = fake.put({ title: 'Duda D', body: 'd' });
    const second = await sync(cursor);
    expect(second.map((r) => r.id)).toEqual([a.id, d.id]);
    expect(second[0]!.text).toContain('a, edited');
  });

  it('contacts changed in the same millisecond are each read once', async () => {
    fake = await startHubspotFake();
    for (let i = 1; i <= 5; i++) fake.put({ title: `Same ${i}`, body: 'x' });
    const at = fake.records[0]!.updated;
    for (const r of fake.records) r.updated = at;
    fake.put({ title: 'Later', body: 'y' });
    const records = await sync(null);
    expect(records.map((r) => r.text.split('\n')[0])).toEqual(['Same 1', 'Same 2', 'Same 3', 'Same 4', 'Same 5', 'Later']);
    expect(searches().map((s) => s.after)).toEqual([undefined, '2', '4']);
  });

  it('reads a backlog past the 10,000 results a search allows', async () => {
    fake = await startHubspotFake({ pageSize: 100 });
    for (let i = 0; i < 10_050; i++) fake.put({ title: `Contact ${i}`, body: `n${i}` });
    const records = await sync(null);
    expect(records).toHaveLength(10_050);
    expect(new Set(records.map((r) => r.id)).size).toBe(10_050);
    expect(searches().every((s) => Number(s.after ?? 0) < 10_000)).toBe(true);
  });

  it('steps past a date shared by more contacts than one search can page through', async () => {
    fake = await startHubspotFake({ pageSize: 100 });
    for (let i = 0; i < 10_001; i++) fake.put({ title: `Bulk ${i}`, body: 'imported' });
    const at = fake.records[0]!.updated;
    for (const r of fake.records) r.updated = at;
    const later = fake.put({ title: 'After the import', body: 'z' });
    const records = await sync(null);
    // 10,000 of the import (the search cannot reach the 10,001st), then what changed after it
    expect(records).toHaveLength(10_001);
    expect(records.at(-1)!.id).toBe(later.id);
    expect(searches().at(-1)!.filterGroups[0]!.filters[0]).toMatchObject({ operator: 'GT', value: String(at) });
  });

  it('waits for Retry-After on a 429 and retries a 500', async () => {
    fake = await startHubspotFake();
    fake.put({ title: 'Ana A', body: 'a' });
    fake.failNext(429);
    const started = Date.now();
    expect(await sync(null)).toHaveLength(1);
    expect(fake.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    fake.failNext(500, 2);
    expect(await sync(null)).toHaveLength(1);
    expect(fake.requests).toHaveLength(7);
  });

  it('a wrong token fails with HubSpot’s own message', async () => {
    fake = await startHubspotFake();
    fake.put({ title: 'Ana A', body: 'a' });
    const err = await sync(null, { token: 'pat-na1-wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).status).toBe(401);
    expect((err as ProviderError).message).toContain('hubspot answered 401: Authentication credentials not found.');
  });

  it('requires a token', () => {
    expect(hubspot.credentials.safeParse({ token: '' }).error?.issues[0]?.path).toEqual(['token']);
    expect(hubspot.config.parse({ sync_interval_minutes: 60 })).toEqual({ sync_interval_minutes: 60 });
  });
});
