import { bearer, readJson, startProviderFake, type FakeRecord } from './base.ts';

export const HUBSPOT_FAKE_TOKEN = 'pat-na1-fake-token';
export const HUBSPOT_FAKE_PORTAL = 4_821_337;

/** HubSpot's answer to a missing or wrong token. */
const UNAUTHORIZED = {
  status: 'error',
  message:
    'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
  correlationId: '0b3c1d44-5e2f-4a71-9b1e-6c0d2f7a9e10',
  category: 'INVALID_AUTHENTICATION',
};

const validation = (message: string) => ({
  status: 400,
  json: { status: 'error', message, correlationId: '7d1e2f3a-0000-4000-8000-000000000001', category: 'VALIDATION_ERROR' },
});

interface SearchBody {
  filterGroups?: Array<{ filters: Array<{ propertyName: string; operator: string; value?: string }> }>;
  sorts?: Array<{ propertyName: string; direction?: 'ASCENDING' | 'DESCENDING' }>;
  properties?: string[];
  limit?: number;
  after?: string;
}

/** Ties in order of id: numerically for HubSpot's numeric ids. */
const byId = (a: string, b: string) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0);

/** A filter value on a date property: epoch milliseconds or ISO 8601, as HubSpot accepts both. */
const dateValue = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : Date.parse(v ?? ''));

function matches(r: FakeRecord, f: { propertyName: string; operator: string; value?: string }): boolean {
  if (f.propertyName !== 'lastmodifieddate') throw new Error(`the fake filters only on lastmodifieddate, not ${f.propertyName}`);
  const v = dateValue(f.value);
  switch (f.operator) {
    case 'GT':
      return r.updated > v;
    case 'GTE':
      return r.updated >= v;
    case 'LT':
      return r.updated < v;
    case 'LTE':
      return r.updated <= v;
    case 'EQ':
      return r.updated === v;
    default:
      throw new Error(`the fake has no operator ${f.operator}`);
  }
}

/**
 * A record as a contact: the title's first word is the first name, the rest the last name, and
 * the body the contact's `message` (the multi-line text property HubSpot forms fill in).
 */
function contact(r: FakeRecord, wanted: string[]) {
  const [firstname, ...rest] = r.title.split(' ');
  const at = new Date(r.updated).toISOString();
  const all: Record<string, string | null> = {
    firstname: firstname ?? null,
    lastname: rest.join(' ') || null,
    email: `${r.title.toLowerCase().replace(/[^a-z0-9]+/g, '.')}@acme.test`,
    company: 'Acme',
    jobtitle: 'Buyer',
    phone: '+351 210 000 000',
    lifecyclestage: 'lead',
    message: r.body,
    createdate: '2024-01-02T09:00:00.000Z',
    lastmodifieddate: at,
    hs_object_id: r.id,
  };
  // Search answers the asked properties, and always these three.
  const keys = new Set([...wanted, 'createdate', 'lastmodifieddate', 'hs_object_id']);
  const properties = Object.fromEntries(Object.entries(all).filter(([k]) => keys.has(k)));
  return { id: r.id, properties, createdAt: '2024-01-02T09:00:00.000Z', updatedAt: at, archived: false };
}

/** HubSpot's CRM search (`POST /crm/v3/objects/contacts/search`) and account details, private-app Bearer auth. */
export function startHubspotFake(opts: { pageSize?: number } = {}) {
  const cap = opts.pageSize ?? 2;
  return startProviderFake({
    newId: (n) => String(151 + n),
    connection: () => ({ credentials: { token: HUBSPOT_FAKE_TOKEN }, config: {} }),
    route(req, fake) {
      if (bearer(req) !== HUBSPOT_FAKE_TOKEN) return { status: 401, json: UNAUTHORIZED };
      if (req.method === 'GET' && req.url.pathname === '/account-info/v3/details') {
        return {
          json: {
            portalId: HUBSPOT_FAKE_PORTAL,
            accountType: 'STANDARD',
            timeZone: 'Europe/Lisbon',
            companyCurrency: 'EUR',
            additionalCurrencies: [],
            utcOffset: '+00:00',
            utcOffsetMilliseconds: 0,
            uiDomain: 'app-eu1.hubspot.com',
            dataHostingLocation: 'eu1',
          },
        };
      }
      if (req.method !== 'POST' || req.url.pathname !== '/crm/v3/objects/contacts/search') return { status: 404, body: 'Not Found' };
      const body = readJson<SearchBody>(req);
      const limit = body.limit ?? 10;
      if (limit < 1 || limit > 200) return validation(`limit must be between 1 and 200 (was ${limit})`);
      const offset = Number(body.after ?? 0);
      // The search window: 10,000 results per query, whatever the paging.
      if (offset >= 10_000) return validation('There was a problem with the request.');
      const groups = body.filterGroups ?? [];
      let rows = fake.records.filter((r) => !groups.length || groups.some((g) => g.filters.every((f) => matches(r, f))));
      const sort = body.sorts?.[0];
      if (sort && sort.propertyName !== 'lastmodifieddate') throw new Error(`the fake sorts only on lastmodifieddate, not ${sort.propertyName}`);
      const sign = sort?.direction === 'DESCENDING' ? -1 : 1;
      rows = [...rows].sort((a, b) => sign * (a.updated - b.updated) || byId(a.id, b.id));
      const end = Math.min(offset + Math.min(limit, cap), 10_000);
      const page = rows.slice(offset, end);
      return {
        json: {
          total: rows.length,
          results: page.map((r) => contact(r, body.properties ?? [])),
          ...(rows.length > end ? { paging: { next: { after: String(end), link: `${fake.url}/crm/v3/objects/contacts/search?after=${end}` } } } : {}),
        },
      };
    },
  });
}
