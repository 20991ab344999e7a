import { convert } from 'html-to-text';
import { confluenceProvider } from '../../../schemas/providers/confluence.ts';
import { defineConnector, type ConnectorRecord } from './connector.ts';

/**
 * Confluence Cloud pages through the v1 CQL content search, newest-modified first, following the
 * `_links.next` cursor links (Atlassian retired `start` offsets for search in favour of them).
 */

// Confluence caps pages of content with the body expanded at a small size; 25 is always accepted.
const PAGE_SIZE = 25;
// CQL reads `lastmodified` in minutes and, as Atlassian's dates generally are, in the searching
// user's time zone. Asking from 12 hours (the most negative UTC offset) before the cursor never
// misses a change whatever that zone; pages not newer than the cursor are then dropped here.
const TZ_MARGIN_MS = 12 * 3_600_000;

interface Content {
  id: string;
  title: string;
  space?: { key: string };
  version: { when: string; number: number; by?: { displayName?: string } };
  body?: { storage?: { value: string } };
  _links: { webui?: string };
}

interface SearchAnswer {
  results: Content[];
  _links: { base?: string; context?: string; next?: string };
}

const block = ['structured-macro', 'rich-text-body', 'task', 'layout-section', 'layout-cell'];
// Macro settings, task bookkeeping, images and template placeholders are not the page's words.
const skip = ['parameter', 'task-id', 'task-uuid', 'task-status', 'image', 'placeholder'];
const SELECTORS = [
  ...block.map((tag) => ({ selector: `ac\\:${tag}`, format: 'block' })),
  ...skip.map((tag) => ({ selector: `ac\\:${tag}`, format: 'skip' })),
  { selector: 'ac\\:plain-text-body', format: 'pre' },
  { selector: 'img', format: 'skip' },
  { selector: 'a', options: { ignoreHref: true } },
  { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ...[1, 2, 3, 4, 5, 6].map((n) => ({ selector: `h${n}`, options: { uppercase: false } })),
];

/** Storage format (XHTML with ac:/ri: elements) to plain text, keeping the text inside macros. */
function storageToText(xhtml: string): string {
  // Code and link bodies sit in CDATA, which an HTML parser drops: turn it into escaped text.
  const html = xhtml.replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
  return convert(html, { wordwrap: false, selectors: SELECTORS }).trim();
}

/**
 * The next link is relative to the site's context path (/wiki). It is requested from the configured
 * site, never from a host named in the answer, so the credentials stay with that site.
 */
function nextUrl(apiUrl: string, links: SearchAnswer['_links']): string | null {
  if (!links.next) return null;
  const next = /^https?:\/\//.test(links.next) ? ((u) => u.pathname + u.search)(new URL(links.next)) : links.next;
  const context = links.context ?? '/wiki';
  return `${apiUrl}${next.startsWith(`${context}/`) ? '' : context}${next}`;
}

/** CQL's date form, in UTC components. */
const cqlDate = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

export const confluence = defineConnector(confluenceProvider, async function* (ctx) {
  const { email, api_token } = ctx.credentials;
  const headers = { authorization: `Basic ${Buffer.from(`${email}:${api_token}`).toString('base64')}` };
  const clauses = ['type=page'];
  if (ctx.config.space_key) clauses.push(`space="${ctx.config.space_key}"`);
  if (ctx.cursor) clauses.push(`lastmodified >= "${cqlDate(Date.parse(ctx.cursor) - TZ_MARGIN_MS)}"`);
  const query = new URLSearchParams({
    cql: `${clauses.join(' and ')} order by lastmodified desc`,
    limit: String(PAGE_SIZE),
    expand: 'body.storage,version,space',
  });
  let url: string | null = `${ctx.apiUrl}/wiki/rest/api/content/search?${query}`;
  while (url) {
    const answer: SearchAnswer = await ctx.http.json<SearchAnswer>(url, { headers });
    const records = answer.results.map((page): ConnectorRecord => {
      const updated = new Date(page.version.when).toISOString();
      const body = storageToText(page.body?.storage?.value ?? '');
      const webBase = answer._links.base ?? `${ctx.apiUrl}/wiki`;
      return {
        id: page.id,
        text: body ? `${page.title}\n${body}` : page.title,
        url: page._links.webui ? `${webBase}${page._links.webui}` : null,
        author: page.version.by?.displayName ?? null,
        updated_at: updated,
        // version.when carries an offset on some sites: normalised so cursors sort as strings.
        cursor: updated,
        extra: { space_key: page.space?.key ?? ctx.config.space_key ?? null, version: page.version.number },
      };
    });
    const fresh = records.filter((r) => !ctx.cursor || r.cursor > ctx.cursor);
    if (fresh.length) yield fresh;
    // Newest first: once a page is older than the cursor, everything after it is too.
    if (fresh.length < records.length) return;
    url = nextUrl(ctx.apiUrl, answer._links);
  }
});
