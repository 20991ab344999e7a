import { hubspotProvider } from '../../../schemas/providers/hubspot.ts';
import { ProviderError } from '../http.ts';
import { defineConnector, type ConnectorRecord } from './connector.ts';

/**
 * HubSpot contacts through the CRM search API, oldest-modified first.
 *
 * Why ascending, and no long offset paging: a search query returns at most 10,000 results (asking
 * past them is a 400), and its `after` is an offset, which shifts when a contact ahead of it changes
 * and moves to the end. So each request is a new query from the last modification date read (GTE,
 * `after` skipping only the contacts on that very date already read): no offset grows past a page,
 * contacts already read are out of the query, and a backlog of any size comes in one sync.
 * Newest first, by contrast, stops at the newest 10,000 and the cursor then passes the rest by.
 */

// The most a search page holds: fewer requests against the search's own per-second limit.
const PAGE_SIZE = 200;
const MAX_RESULTS = 10_000;
const PROPERTIES = ['firstname', 'lastname', 'email', 'company', 'jobtitle', 'phone', 'lifecyclestage', 'message', 'lastmodifieddate'];

interface Contact {
  id: string;
  properties: Record<string, string | null | undefined>;
  updatedAt: string;
}

interface SearchAnswer {
  total: number;
  results: Contact[];
  paging?: { next?: { after: string } };
}

interface AccountDetails {
  portalId: number;
  uiDomain?: string;
}

function toRecord(c: Contact, web: AccountDetails | null): ConnectorRecord {
  const p = c.properties;
  const name = [p.firstname, p.lastname].filter(Boolean).join(' ').trim();
  const lines = [
    ['Email', p.email],
    ['Company', p.company],
    ['Job title', p.jobtitle],
    ['Phone', p.phone],
    ['Lifecycle stage', p.lifecyclestage],
  ]
    .filter(([, v]) => v)
    .map(([k, v]) => `${k}: ${v}`);
  const message = p.message?.trim();
  // The cursor comes from the property the search filters and sorts on, so they agree.
  const updated = new Date(p.lastmodifieddate ?? c.updatedAt).toISOString();
  return {
    id: c.id,
    text: [name || p.email || `Contact ${c.id}`, ...lines, ...(message ? [message] : [])].join('\n'),
    url: web ? `https://${web.uiDomain ?? 'app.hubspot.com'}/contacts/${web.portalId}/record/0-1/${c.id}` : null,
    author: null,
    updated_at: updated,
    cursor: updated,
    extra: { email: p.email ?? null, company: p.company ?? null },
  };
}

export const hubspot = defineConnector(hubspotProvider, async function* (ctx) {
  const headers = { authorization: `Bearer ${ctx.credentials.token}` };
  // Search results carry no account: the portal id (for web links) comes from the account info.
  // A private app without access to it still syncs, without links.
  const web = await ctx.http.json<AccountDetails>(`${ctx.apiUrl}/account-info/v3/details`, { headers }).catch((err: unknown) => {
    if (err instanceof ProviderError && err.status === 403) return null;
    throw err;
  });
  let bound = ctx.cursor ? Date.parse(ctx.cursor) : null;
  // The stored cursor was read in full; later bounds are dates read only in part.
  let operator: 'GT' | 'GTE' = 'GT';
  let skip = 0;
  for (;;) {
    const answer: SearchAnswer = await ctx.http.json<SearchAnswer>(`${ctx.apiUrl}/crm/v3/objects/contacts/search`, {
      method: 'POST',
      headers,
      body: {
        filterGroups: bound === null ? [] : [{ filters: [{ propertyName: 'lastmodifieddate', operator, value: String(bound) }] }],
        sorts: [{ propertyName: 'lastmodifieddate', direction: 'ASCENDING' }],
        properties: PROPERTIES,
        limit: PAGE_SIZE,
        ...(skip ? { after: String(skip) } : {}),
      },
    });
    const records = answer.results.map((c) => toRecord(c, web));
    if (records.length) yield records;
    if (!answer.paging?.next || !records.length) return;
    const last = Date.parse(records.at(-1)!.cursor);
    const onLast = records.filter((r) => Date.parse(r.cursor) === last).length;
    if (last === bound && operator === 'GTE') skip += onLast;
    else [bound, operator, skip] = [last, 'GTE', onLast];
    // 10,000 contacts changed in one millisecond (a bulk import) cannot be paged further: step past.
    if (skip >= MAX_RESULTS) [operator, skip] = ['GT', 0];
  }
});
