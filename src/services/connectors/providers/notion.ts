import { notionProvider } from '../../../schemas/providers/notion.ts';
import { ProviderError } from '../http.ts';
import { defineConnector, type ConnectorRecord } from './connector.ts';

/**
 * Notion pages, newest-edited first: every page shared with the integration (search), or the
 * pages of one database (database query). The cursor is the page's last_edited_time, which Notion
 * rounds down to the minute: a page edited later in the minute of the cursor has the cursor's
 * time, so the filter is "on or after" (the engine skips the unchanged pages seen again).
 */
const NOTION_VERSION = '2022-06-28';
const PAGE_SIZE = 100;
/** Nested blocks (toggles, sub-items, columns) cost a request each: deeper ones are left out. */
const MAX_DEPTH = 3;

interface RichText {
  plain_text?: string;
}
interface Page {
  object: string;
  id: string;
  url?: string;
  last_edited_time: string;
  archived?: boolean;
  in_trash?: boolean;
  created_by?: { id?: string };
  last_edited_by?: { id?: string };
  parent?: { type?: string; database_id?: string; page_id?: string };
  properties?: Record<string, { type?: string; title?: RichText[] }>;
}
interface Block {
  id: string;
  type: string;
  has_children?: boolean;
  [type: string]: unknown;
}
interface List<T> {
  results: T[];
  next_cursor?: string | null;
  has_more?: boolean;
}
interface BlockValue {
  rich_text?: RichText[];
  caption?: RichText[];
  checked?: boolean;
  title?: string;
  expression?: string;
  url?: string;
  cells?: RichText[][];
}

const plain = (rt: RichText[] | undefined) => (rt ?? []).map((t) => t.plain_text ?? '').join('');
/** Notion writes `.000Z`, but a canonical form keeps cursors comparable as strings whatever it sends. */
const iso = (t: string) => new Date(t).toISOString();

/** One block as a line of plain text, or null for blocks without text (dividers, images without caption). */
function line(b: Block, n: number): string | null {
  const v = (b[b.type] ?? {}) as BlockValue;
  const text = plain(v.rich_text);
  switch (b.type) {
    case 'bulleted_list_item':
      return `- ${text}`;
    case 'numbered_list_item':
      return `${n}. ${text}`;
    case 'to_do':
      return `[${v.checked ? 'x' : ' '}] ${text}`;
    case 'child_page':
    case 'child_database':
      return v.title ?? null;
    case 'equation':
      return v.expression ?? null;
    case 'table_row':
      return (v.cells ?? []).map(plain).join(' | ');
    case 'bookmark':
    case 'embed':
    case 'link_preview':
      return [plain(v.caption), v.url].filter(Boolean).join(' ') || null;
    default:
      // paragraph, headings, quote, callout, toggle, code, template: rich_text; media: a caption.
      return v.rich_text ? text : plain(v.caption) || null;
  }
}

export const notion = defineConnector(notionProvider, async function* (ctx) {
  const headers = { authorization: `Bearer ${ctx.credentials.token}`, 'notion-version': NOTION_VERSION };
  const since = ctx.cursor;
  const database = ctx.config.database_id;

  async function blocks(id: string, depth: number): Promise<string[]> {
    const lines: string[] = [];
    let start: string | undefined;
    let numbered = 0;
    do {
      const query = new URLSearchParams({ page_size: String(PAGE_SIZE), ...(start && { start_cursor: start }) });
      const list = await ctx.http.json<List<Block>>(`${ctx.apiUrl}/v1/blocks/${encodeURIComponent(id)}/children?${query}`, { headers });
      for (const b of list.results) {
        numbered = b.type === 'numbered_list_item' ? numbered + 1 : 0;
        const text = line(b, numbered);
        if (text !== null) lines.push('  '.repeat(depth) + text);
        // A child page's children are that page's own blocks: it is a record of its own.
        if (b.has_children && depth + 1 < MAX_DEPTH && b.type !== 'child_page' && b.type !== 'child_database') {
          lines.push(...(await blocks(b.id, depth + 1)));
        }
      }
      start = list.has_more ? (list.next_cursor ?? undefined) : undefined;
    } while (start);
    return lines;
  }

  // Names through the users endpoint, once per user per sync; an integration without the
  // user-information capability (403) keeps the ids, and is not asked again.
  const names = new Map<string, string>();
  let userInfo = true;
  async function author(id: string | undefined): Promise<string | null> {
    if (!id) return null;
    if (!userInfo) return id;
    if (!names.has(id)) {
      try {
        const u = await ctx.http.json<{ name?: string; person?: { email?: string } }>(`${ctx.apiUrl}/v1/users/${encodeURIComponent(id)}`, { headers });
        names.set(id, u.name || u.person?.email || id);
      } catch (err) {
        if (!(err instanceof ProviderError) || (err.status !== 403 && err.status !== 404)) throw err;
        userInfo = err.status !== 403;
        names.set(id, id);
      }
    }
    return names.get(id)!;
  }

  async function record(p: Page): Promise<ConnectorRecord> {
    const title = plain(Object.values(p.properties ?? {}).find((v) => v.type === 'title')?.title) || 'Untitled';
    const edited = iso(p.last_edited_time);
    return {
      id: p.id,
      text: [title, ...(await blocks(p.id, 0))].join('\n').trim(),
      url: p.url ?? null,
      author: await author(p.last_edited_by?.id ?? p.created_by?.id),
      updated_at: edited,
      cursor: edited,
      extra: { parent: p.parent?.type ?? null, database_id: p.parent?.database_id ?? null },
    };
  }

  const sort = { timestamp: 'last_edited_time', direction: 'descending' };
  let start: string | undefined;
  for (;;) {
    const paging = { page_size: PAGE_SIZE, ...(start && { start_cursor: start }) };
    const list = database
      ? await ctx.http.json<List<Page>>(`${ctx.apiUrl}/v1/databases/${encodeURIComponent(database)}/query`, {
          method: 'POST',
          headers,
          body: { ...paging, sorts: [sort], ...(since && { filter: { timestamp: 'last_edited_time', last_edited_time: { on_or_after: since } } }) },
        })
      : await ctx.http.json<List<Page>>(`${ctx.apiUrl}/v1/search`, {
          method: 'POST',
          headers,
          body: { ...paging, filter: { property: 'object', value: 'page' }, sort },
        });
    // Search cannot filter by time: its results come newest first, so the first page older
    // than the cursor ends the sync.
    const fresh = list.results.filter((p) => !since || iso(p.last_edited_time) >= since);
    const records: ConnectorRecord[] = [];
    for (const p of fresh) if (p.object === 'page' && !p.archived && !p.in_trash) records.push(await record(p));
    if (records.length) yield records;
    if (fresh.length < list.results.length || !list.has_more || !list.next_cursor) return;
    start = list.next_cursor;
  }
});
