import { startProviderFake, type FakeRecord, type ProviderFake } from './base.ts';

export const CONFLUENCE_FAKE_EMAIL = 'ana@acme.test';
export const CONFLUENCE_FAKE_TOKEN = 'ATATT-fake-api-token';
export const CONFLUENCE_FAKE_SPACE = 'ENG';

/** Confluence Cloud's answer to a wrong email or API token. */
const UNAUTHORIZED = { statusCode: 401, message: 'Client must be authenticated to access this resource.' };

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A record's body in storage format: paragraphs at blank lines, <br/> at single newlines, so the
 * connector's plain text holds the body as written. A body that already is storage format (it
 * starts with `<`) is served as it is, for tests of macros and markup.
 */
const storage = (body: string) =>
  body.startsWith('<')
    ? body
    : body
        .split(/\n{2,}/)
        .map((p) => `<p>${p.split('\n').map(escape).join('<br />')}</p>`)
        .join('');

// The search's cursor is opaque to clients; this one holds the sort key of a page's last result.
const encode = (r: FakeRecord) => Buffer.from(JSON.stringify([r.updated, r.id])).toString('base64url');
const decode = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [number, string];
const newerFirst = (a: { updated: number; id: string }, b: { updated: number; id: string }) =>
  b.updated - a.updated || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** The CQL the connector sends: type=page [and space="K"] [and lastmodified >= "yyyy-MM-dd HH:mm"] order by lastmodified desc. */
function parseCql(cql: string): { space: string | null; since: number | null } | null {
  const m = /^type=page(?: and space="([^"]+)")?(?: and lastmodified >= "(\d{4}-\d{2}-\d{2} \d{2}:\d{2})")? order by lastmodified desc$/.exec(cql);
  if (!m) return null;
  // The fake's users live in UTC.
  return { space: m[1] ?? null, since: m[2] ? Date.parse(`${m[2].replace(' ', 'T')}:00Z`) : null };
}

/** Confluence Cloud's REST v1 content search (`GET /wiki/rest/api/content/search`), Basic auth, every page in space ENG. */
export async function startConfluenceFake(opts: { pageSize?: number } = {}): Promise<ProviderFake> {
  const cap = opts.pageSize ?? 2;
  // Every put of a page is a new version of it, numbered from 1 as Confluence does.
  const versions = new Map<string, number>();
  const basic = `Basic ${Buffer.from(`${CONFLUENCE_FAKE_EMAIL}:${CONFLUENCE_FAKE_TOKEN}`).toString('base64')}`;
  const fake = await startProviderFake({
    newId: (n) => String(65_000 + n),
    connection: (url) => ({ credentials: { email: CONFLUENCE_FAKE_EMAIL, api_token: CONFLUENCE_FAKE_TOKEN }, config: { base_url: url } }),
    route(req, fake) {
      if (req.method !== 'GET' || req.url.pathname !== '/wiki/rest/api/content/search')
        return { status: 404, json: { statusCode: 404, message: 'null for uri: ' + req.url.pathname } };
      if (req.headers.authorization !== basic) return { status: 401, json: UNAUTHORIZED };
      const params = req.url.searchParams;
      const cql = params.get('cql') ?? '';
      const parsed = parseCql(cql);
      if (!parsed) return { status: 400, json: { statusCode: 400, message: `Could not parse cql : ${cql}` } };
      const base = `${fake.url}/wiki`;
      const limit = Math.min(Number(params.get('limit') ?? 25), cap);
      let rows = fake.records
        .filter((r) => (parsed.space === null || parsed.space === CONFLUENCE_FAKE_SPACE) && (parsed.since === null || r.updated >= parsed.since))
        .sort(newerFirst);
      const cursor = params.get('cursor');
      if (cursor) {
        const [updated, id] = decode(cursor);
        rows = rows.filter((r) => newerFirst(r, { updated, id }) > 0);
      }
      const start = Number(params.get('start') ?? 0);
      const page = rows.slice(0, limit);
      const expand = (params.get('expand') ?? '').split(',');
      const results = page.map((r) => ({
        id: r.id,
        type: 'page',
        status: 'current',
        title: r.title,
        ...(expand.includes('space') ? { space: { id: 98_305, key: CONFLUENCE_FAKE_SPACE, name: 'Engineering', type: 'global' } } : {}),
        ...(expand.includes('version')
          ? {
              version: {
                by: { type: 'known', accountId: '5b10ac8d82e05b22cc7d4ef5', displayName: r.author },
                when: new Date(r.updated).toISOString(),
                number: versions.get(r.id) ?? 1,
                minorEdit: false,
              },
            }
          : {}),
        ...(expand.includes('body.storage') ? { body: { storage: { value: storage(r.body), representation: 'storage' } } } : {}),
        _links: {
          webui: `/spaces/${CONFLUENCE_FAKE_SPACE}/pages/${r.id}/${encodeURIComponent(r.title).replace(/%20/g, '+')}`,
          self: `${base}/rest/api/content/${r.id}`,
        },
      }));
      const last = page.at(-1);
      const next = new URLSearchParams({
        next: 'true',
        cursor: last ? encode(last) : '',
        expand: params.get('expand') ?? '',
        limit: String(limit),
        start: String(start + page.length),
        cql,
      });
      return {
        json: {
          results,
          start,
          limit,
          size: results.length,
          _links: {
            base,
            context: '/wiki',
            self: `${base}/rest/api/content/search?cql=${encodeURIComponent(cql)}`,
            ...(rows.length > page.length ? { next: `/rest/api/content/search?${next}` } : {}),
          },
        },
      };
    },
  });
  const put = fake.put.bind(fake);
  fake.put = (r) => {
    const record = put(r);
    versions.set(record.id, (versions.get(record.id) ?? 0) + 1);
    return record;
  };
  return fake;
}
