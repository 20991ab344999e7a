import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { catalogue } from '../procedures/index.ts';
import type { App } from '../src/core/context.ts';
import { invoke, type Caller } from '../src/pipeline/invoke.ts';
import type { AnyProcedure } from '../src/pipeline/procedure.ts';
import { requestError } from './results.ts';

const COLLECTIONS_URI = 'orgmem://collections';
const collectionUri = (name: string) => `${COLLECTIONS_URI}/${name}`;
export const memoryUri = (collection: string, id: string) => `${collectionUri(collection)}/memories/${id}`;

/** Memories listed with a collection: a page a model can take in, the pinned and newest first. */
const COLLECTION_PAGE = 50;
const mimeType = 'application/json';

/**
 * Collections and memories as MCP resources, read through `invoke` like the tools, so a key sees
 * exactly what REST would show it (restricted collections included).
 */
export function registerResources(server: McpServer, app: App, caller: Caller) {
  const run = async <T>(proc: AnyProcedure, input: Record<string, unknown>): Promise<T> => {
    try {
      return (await invoke(app, proc, caller, input)).output as T;
    } catch (err) {
      throw requestError(err);
    }
  };
  const collections = () => run<Array<{ name: string; description: string | null; memory_count: number }>>(catalogue.collections.list, {});
  const names = async (prefix: string) => (await collections()).map((c) => c.name).filter((n) => n.startsWith(prefix));
  const json = (uri: URL, value: unknown) => ({ contents: [{ uri: uri.href, mimeType, text: JSON.stringify(value) }] });
  const one = (v: string | string[] | undefined) => String(Array.isArray(v) ? v[0] : v);

  server.registerResource(
    'collections',
    COLLECTIONS_URI,
    { title: 'Collections', description: 'Every collection this key can see, with descriptions and memory counts', mimeType },
    async (uri) => json(uri, await collections()),
  );
  server.registerResource(
    'collection',
    new ResourceTemplate(collectionUri('{name}'), {
      list: async () => ({
        resources: (await collections()).map((c) => ({
          uri: collectionUri(c.name),
          name: c.name,
          description: `${c.description ? `${c.description}; ` : ''}${c.memory_count} memories`,
          mimeType,
        })),
      }),
      complete: { name: names },
    }),
    { title: 'A collection', description: `A collection and its ${COLLECTION_PAGE} first memories (pinned, then newest)`, mimeType },
    async (uri, { name }) =>
      json(uri, {
        collection: await run(catalogue.collections.get, { name: one(name) }),
        memories: await run(catalogue.memories.list, { collection: one(name), limit: COLLECTION_PAGE }),
      }),
  );
  server.registerResource(
    'memory',
    new ResourceTemplate(memoryUri('{collection}', '{id}'), { list: undefined, complete: { collection: names } }),
    { title: 'A memory', description: 'One memory with its metadata and files', mimeType },
    async (uri, { collection, id }) => json(uri, await run(catalogue.memories.get, { collection: one(collection), id: one(id) })),
  );
}
