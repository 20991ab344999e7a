import { linearProvider } from '../../../schemas/providers/linear.ts';
import { ProviderError } from '../http.ts';
import { defineConnector, type ConnectorRecord } from './connector.ts';

/**
 * Linear issues through the GraphQL API. `orderBy: updatedAt` lists the most recently updated
 * issues first, and `updatedAt > cursor` keeps an incremental sync to what changed since the last.
 */

// 50 issues a page keeps a query well under Linear's complexity limit per request even with
// every issue's labels connection (which Linear bills per node).
const PAGE_SIZE = 50;

const QUERY = `query Issues($first: Int!, $after: String, $filter: IssueFilter) {
  issues(first: $first, after: $after, orderBy: updatedAt, filter: $filter) {
    nodes {
      id identifier title description url updatedAt
      state { name } assignee { name } team { name key }
      labels { nodes { name } } creator { name }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Issue {
  id: string;
  identifier: string;
  title: string;
  description: string | null;
  url: string;
  updatedAt: string;
  state: { name: string } | null;
  assignee: { name: string } | null;
  team: { name: string; key: string } | null;
  labels: { nodes: Array<{ name: string }> } | null;
  creator: { name: string } | null;
}

interface IssuesAnswer {
  data?: { issues: { nodes: Issue[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

function toRecord(issue: Issue): ConnectorRecord {
  const labels = issue.labels?.nodes.map((l) => l.name) ?? [];
  const state = issue.state?.name ?? null;
  const assignee = issue.assignee?.name ?? null;
  const team = issue.team?.name ?? null;
  const facts = [`State: ${state ?? '-'}`, `Assignee: ${assignee ?? 'unassigned'}`, `Team: ${team ?? '-'}`, `Labels: ${labels.join(', ') || '-'}`].join(' · ');
  const description = issue.description?.trim();
  const updated = new Date(issue.updatedAt).toISOString();
  return {
    id: issue.id,
    text: [`${issue.identifier} ${issue.title}`, ...(description ? [description] : []), facts].join('\n'),
    url: issue.url || null,
    author: issue.creator?.name ?? null,
    updated_at: updated,
    // updatedAt normalised to toISOString() so cursors compare as strings in change order.
    cursor: updated,
    extra: { identifier: issue.identifier, state, assignee, team, labels },
  };
}

export const linear = defineConnector(linearProvider, async function* (ctx) {
  const filter = ctx.cursor ? { updatedAt: { gt: ctx.cursor } } : undefined;
  let after: string | null = null;
  for (;;) {
    const answer: IssuesAnswer = await ctx.http.json<IssuesAnswer>(`${ctx.apiUrl}/graphql`, {
      method: 'POST',
      // A personal API key goes in Authorization as it is; Linear keeps `Bearer` for OAuth tokens.
      headers: { authorization: ctx.credentials.token },
      body: { query: QUERY, variables: { first: PAGE_SIZE, after, filter } },
    });
    // GraphQL reports errors with HTTP 200 too: a response with `errors` has no usable data.
    if (answer.errors?.length) throw new ProviderError(`linear: ${answer.errors.map((e) => e.message).join('; ')}`);
    const issues = answer.data?.issues;
    if (!issues) throw new ProviderError('linear: the answer has no issues');
    if (issues.nodes.length) yield issues.nodes.map(toRecord);
    if (!issues.pageInfo.hasNextPage || !issues.pageInfo.endCursor) return;
    after = issues.pageInfo.endCursor;
  }
});
