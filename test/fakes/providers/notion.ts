import { createHash, randomUUID } from 'node:crypto';
import { bearer, readJson, startProviderFake, type FakeAnswer, type FakeRecord, type FakeRequest, type ProviderFake } from './base.ts';

export const NOTION_FAKE_TOKEN = 'secret_fake-token';
export const NOTION_FAKE_DATABASE = '0f3b6c2a-9d1e-4c5b-8a7f-2e4d6b8c1a30';

/** A uuid made of a name, so users and blocks keep their ids from one request to the next. */
const uuidOf = (name: string) => {
  const h = createHash('sha1').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
const bare = (id: string) => id.replace(/-/g, '');
/** Notion rounds created and last-edited times down to the minute. */
const minute = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
const richText = (content: string) =>
  content
    ? [
        {
          type: 'text',
          text: { content, link: null },
          annotations: { bold: false, italic: false, strikethrough: false, underline: false, code: false, color: 'default' },
          plain_text: content,
          href: null,
        },
      ]
    : [];
const error = (status: number, code: string, message: string): FakeAnswer => ({
  status,
  json: { object: 'error', status, code, message, request_id: randomUUID() },
});

interface FakeBlock {
  object: 'block';
  id: string;
  type: string;
  has_children: boolean;
  [type: string]: unknown;
}

/**
 * Notion's API (version 2022-06-28) over one database: search and database query (newest-edited
 * first, cursor pagination where next_cursor is the id of the next result, the last_edited_time
 * timestamp filter), a page's block children and users. A record is a page of the database, its
 * title the page title and its body one block a line: `- x` a bulleted item, `[ ] x` / `[x] x` a
 * to-do, a line indented by two spaces a child of the block above, anything else a paragraph.
 * `userInfo: false` plays an integration without the user-information capability.
 */
export async function startNotionFake(opts: { pageSize?: number; userInfo?: boolean } = {}): Promise<ProviderFake> {
  const cap = opts.pageSize ?? 2;
  const created = new Map<string, number>();
  const users = new Map<string, string>();
  const userId = (name: string) => {
    const id = uuidOf(`user:${name}`);
    users.set(id, name);
    return id;
  };

  function page(r: FakeRecord) {
    const user = { object: 'user', id: userId(r.author) };
    const slug = r.title.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
    return {
      object: 'page',
      id: r.id,
      created_time: minute(created.get(r.id) ?? r.updated),
      last_edited_time: minute(r.updated),
      created_by: user,
      last_edited_by: user,
      cover: null,
      icon: null,
      parent: { type: 'database_id', database_id: NOTION_FAKE_DATABASE },
      archived: false,
      in_trash: false,
      properties: { Name: { id: 'title', type: 'title', title: richText(r.title) } },
      url: `https://www.notion.so/${slug ? `${slug}-` : ''}${bare(r.id)}`,
      public_url: null,
    };
  }

  /** A record's blocks: the top-level ones, and children by parent block id. */
  function blocksOf(r: FakeRecord): Map<string, FakeBlock[]> {
    const tree = new Map<string, FakeBlock[]>([[r.id, []]]);
    r.body.split('\n').forEach((raw, i) => {
      const nested = raw.startsWith('  ');
      const text = nested ? raw.slice(2) : raw;
      const todo = /^\[( |x)\] /.exec(text);
      const [type, value] = text.startsWith('- ')
        ? ['bulleted_list_item', { rich_text: richText(text.slice(2)), color: 'default' }]
        : todo
          ? ['to_do', { rich_text: richText(text.slice(4)), checked: todo[1] === 'x', color: 'default' }]
          : ['paragraph', { rich_text: richText(text), color: 'default' }];
      const block: FakeBlock = { object: 'block', id: uuidOf(`${r.id}/${i}`), type, has_children: false, archived: false, in_trash: false, [type]: value };
      const top = tree.get(r.id)!;
      const parent = nested ? top.at(-1) : undefined;
      if (parent) {
        parent.has_children = true;
        tree.set(parent.id, [...(tree.get(parent.id) ?? []), block]);
      } else top.push(block);
    });
    return tree;
  }

  /** Notion's list pagination: page_size honoured up to the cap, next_cursor the id of the next result. */
  function list(results: Array<{ id: string }>, pageSize: unknown, start: unknown, type: string): FakeAnswer {
    const size = Math.min(typeof pageSize === 'number' && pageSize > 0 ? pageSize : 100, 100, cap);
    const from = start ? results.findIndex((x) => x.id === start) : 0;
    if (from < 0) return error(400, 'validation_error', `body failed validation: start_cursor provided is invalid: ${String(start)}`);
    const next = results[from + size];
    return { json: { object: 'list', results: results.slice(from, from + size), next_cursor: next?.id ?? null, has_more: !!next, type, [type]: {} } };
  }

  const newestFirst = (records: FakeRecord[], direction: unknown) => {
    const sorted = [...records].sort((a, b) => b.updated - a.updated);
    return direction === 'ascending' ? sorted.reverse() : sorted;
  };

  function route(req: FakeRequest, fake: ProviderFake): FakeAnswer {
    if (bearer(req) !== NOTION_FAKE_TOKEN) return error(401, 'unauthorized', 'API token is invalid.');
    if (!req.headers['notion-version']) {
      return error(400, 'missing_version', 'Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.');
    }
    const path = req.url.pathname;
    if (req.method === 'POST' && path === '/v1/search') {
      const body = readJson<{ query?: string; filter?: { value?: string }; sort?: { direction?: string }; page_size?: number; start_cursor?: string }>(req);
      if (body.filter?.value === 'database') return list([], body.page_size, undefined, 'page_or_database');
      const query = (body.query ?? '').toLowerCase();
      const records = newestFirst(fake.records, body.sort?.direction).filter((r) => r.title.toLowerCase().includes(query));
      return list(records.map(page), body.page_size, body.start_cursor, 'page_or_database');
    }
    const query = /^\/v1\/databases\/([^/]+)\/query$/.exec(path);
    if (req.method === 'POST' && query) {
      if (bare(decodeURIComponent(query[1]!)) !== bare(NOTION_FAKE_DATABASE)) {
        return error(
          404,
          'object_not_found',
          `Could not find database with ID: ${decodeURIComponent(query[1]!)}. Make sure the relevant pages and databases are shared with your integration.`,
        );
      }
      type Filter = { timestamp?: string; last_edited_time?: Record<string, string> };
      const body = readJson<{ filter?: Filter; sorts?: Array<{ timestamp?: string; direction?: string }>; page_size?: number; start_cursor?: string }>(req);
      let records = newestFirst(fake.records, body.sorts?.[0]?.direction);
      if (body.filter) {
        const [op, value] = Object.entries(body.filter.last_edited_time ?? {})[0] ?? [];
        if (body.filter.timestamp !== 'last_edited_time' || !value || !['on_or_after', 'after'].includes(op!)) {
          return error(400, 'validation_error', 'body failed validation: the fake knows the last_edited_time on_or_after and after filters only.');
        }
        const at = Date.parse(value);
        records = records.filter((r) => (op === 'after' ? Date.parse(minute(r.updated)) > at : Date.parse(minute(r.updated)) >= at));
      }
      return list(records.map(page), body.page_size, body.start_cursor, 'page_or_database');
    }
    const children = /^\/v1\/blocks\/([^/]+)\/children$/.exec(path);
    if (req.method === 'GET' && children) {
      const id = decodeURIComponent(children[1]!);
      for (const r of fake.records) {
        const found = blocksOf(r).get(id);
        if (found) return list(found, Number(req.url.searchParams.get('page_size') ?? 100), req.url.searchParams.get('start_cursor'), 'block');
      }
      return error(
        404,
        'object_not_found',
        `Could not find block with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
      );
    }
    const user = /^\/v1\/users\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && user) {
      if (opts.userInfo === false) return error(403, 'restricted_resource', 'Insufficient permissions for this endpoint.');
      const name = users.get(decodeURIComponent(user[1]!));
      if (!name) return error(404, 'object_not_found', `Could not find user with ID: ${user[1]}.`);
      return {
        json: {
          object: 'user',
          id: user[1],
          type: 'person',
          name,
          avatar_url: null,
          person: { email: `${name.toLowerCase().replace(/\s+/g, '.')}@example.com` },
        },
      };
    }
    return error(400, 'invalid_request_url', 'Invalid request URL.');
  }

  const fake = await startProviderFake({
    route,
    connection: () => ({ credentials: { token: NOTION_FAKE_TOKEN }, config: {} }),
    newId: () => randomUUID(),
  });
  // A page keeps the time it was created at: remember it when the record is first put.
  const put = fake.put.bind(fake);
  fake.put = (r) => {
    const record = put(r);
    if (!created.has(record.id)) created.set(record.id, record.updated);
    return record;
  };
  return fake;
}
