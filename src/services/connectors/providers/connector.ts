import type { ProviderSpec, ServiceSync } from '../../../schemas/providers/provider.ts';
import type { ProviderHttp } from '../http.ts';

/** One record of a provider as it becomes a memory: the memory's text and what leads back to the source. */
export interface ConnectorRecord {
  /** The provider's stable id of the record: a later sync that sees it again updates the same memory. */
  id: string;
  /** The memory text (title first, then the body as plain text); the sync cuts it to the memory limit. */
  text: string;
  url: string | null;
  author: string | null;
  /** When the record last changed at the provider, ISO 8601. */
  updated_at: string;
  /**
   * The record's position for the next sync: strings of one provider sort in the order the
   * provider changed the records, so the largest one a sync stored is the connection's next cursor.
   */
  cursor: string;
  /** Provider-specific metadata kept with the memory (channel, state, labels...): small scalars and string arrays. */
  extra?: Record<string, string | number | boolean | null | string[]>;
}

/** A file a provider holds that is not text (a PDF in a drive): read into text by the files pipeline. */
export interface BinaryFile {
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface FetchContext<Credentials, Config> {
  credentials: Credentials;
  config: Config;
  /** The cursor of the last successful sync (the largest `cursor` it stored); null on the first. */
  cursor: string | null;
  /** The provider's API base URL without a trailing slash (configurable, so fakes can stand in). */
  apiUrl: string;
  /** Requests with the retry rules every provider shares (Retry-After, backoff on 429 and 5xx). */
  http: ProviderHttp;
  /** The text of a binary file, read as uploaded files are. */
  readFile(file: BinaryFile): Promise<string>;
}

/**
 * A provider the service syncs: its spec (src/schemas/providers/: name, credentials and config
 * schemas, where its API is) and how it reads: its records changed after the cursor, page by
 * page. Pages may come in any order; a record seen twice (a provider whose cursor is coarse) is
 * stored once.
 */
export type Connector<Credentials = unknown, Config = unknown> = ProviderSpec<string, Credentials, Config> & {
  sync: ServiceSync;
  pages(ctx: FetchContext<Credentials, Config>): AsyncIterable<ConnectorRecord[]>;
};

export function defineConnector<Credentials, Config>(
  spec: ProviderSpec<string, Credentials, Config> & { sync: ServiceSync },
  pages: Connector<Credentials, Config>['pages'],
): Connector<Credentials, Config> {
  return { ...spec, pages };
}
