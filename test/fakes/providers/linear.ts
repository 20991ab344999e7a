import { readJson, startProviderFake, type FakeRecord } from './base.ts';

export const LINEAR_FAKE_TOKEN = 'lin_api_fake_token';

interface GraphqlBody {
  query?: string;
  variables?: { first?: number; after?: string | null; filter?: { updatedAt?: { gt?: string } } };
}

/** Linear's answer to a request without a valid key: HTTP 400 with a GraphQL error. */
const AUTH_ERROR = {
  errors: [
    {
      message: 'Authentication required, not authenticated',
      extensions: {
        code: 'AUTHENTICATION_ERROR',
        type: 'authentication error',
        userError: true,
        userPresentableMessage: 'You need to authenticate to access this operation.',
      },
    },
  ],
};

// Relay cursors are opaque to clients; this one holds the sort key of the last node of a page.
const encode = (r: FakeRecord) => Buffer.from(JSON.stringify([r.updated, r.id])).toString('base64url');
const decode = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [number, string];

/** Newest-updated first, as Linear lists issues with `orderBy: updatedAt`; ties by id. */
const newerFirst = (a: { updated: number; id: string }, b: { updated: number; id: string }) =>
  b.updated - a.updated || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** Linear's GraphQL API (`POST /graphql`) serving the `issues` connection from the fake's records. */
export function startLinearFake(opts: { pageSize?: number } = {}) {
  const cap = opts.pageSize ?? 2;
  const numbers = new Map<string, number>();
  const identifier = (id: string) => {
    if (!numbers.has(id)) numbers.set(id, numbers.size + 1);
    return `ENG-${numbers.get(id)}`;
  };
  return startProviderFake({
    newId: (n) => `5a1e0000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    connection: () => ({ credentials: { token: LINEAR_FAKE_TOKEN }, config: {} }),
    route(req, fake) {
      if (req.method !== 'POST' || req.url.pathname !== '/graphql') return { status: 404, body: 'Not Found' };
      // Personal API keys are sent bare; `Bearer <key>` or any other key is not authenticated.
      if (req.headers.authorization !== LINEAR_FAKE_TOKEN) return { status: 400, json: AUTH_ERROR };
      const { query = '', variables = {} } = readJson<GraphqlBody>(req);
      if (!/\bissues\s*\(/.test(query) || !/orderBy:\s*updatedAt/.test(query)) {
        return {
          status: 400,
          json: { errors: [{ message: 'The fake answers only issues(orderBy: updatedAt)', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] },
        };
      }
      const first = variables.first ?? 50;
      if (first < 1 || first > 250) {
        return { json: { data: null, errors: [{ message: 'Argument Validation Error', extensions: { code: 'INVALID_INPUT' } }] } };
      }
      // Issue numbers follow creation order, as Linear's team-scoped identifiers do.
      for (const r of fake.records) identifier(r.id);
      const gt = variables.filter?.updatedAt?.gt;
      let rows = fake.records.filter((r) => gt === undefined || r.updated > Date.parse(gt)).sort(newerFirst);
      if (variables.after) {
        const [updated, id] = decode(variables.after);
        rows = rows.filter((r) => newerFirst(r, { updated, id }) > 0);
      }
      const page = rows.slice(0, Math.min(first, cap));
      const last = page.at(-1);
      const nodes = page.map((r) => {
        const ident = identifier(r.id);
        return {
          id: r.id,
          identifier: ident,
          title: r.title,
          description: r.body,
          url: `https://linear.app/acme/issue/${ident.toLowerCase()}/${r.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
          updatedAt: new Date(r.updated).toISOString(),
          state: { name: 'In Progress' },
          assignee: { name: 'Bruno Costa' },
          team: { name: 'Engineering', key: 'ENG' },
          labels: { nodes: [{ name: 'bug' }, { name: 'backend' }] },
          creator: { name: r.author },
        };
      });
      return { json: { data: { issues: { nodes, pageInfo: { hasNextPage: rows.length > page.length, endCursor: last ? encode(last) : null } } } } };
    },
  });
}
