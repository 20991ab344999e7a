import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

export interface OrgmemOptions {
  /** The server's address, e.g. `http://127.0.0.1:8080`; the paths start with `/v1`. */
  baseUrl: string;
  /** An API key, `mv_...`. */
  apiKey: string;
  /** A fetch of your own (a test double, one through a proxy); the global one otherwise. */
  fetch?: (request: Request) => Promise<Response>;
}

/** The REST API as openapi-fetch's client: `GET`, `POST`... of the document's paths, typed. */
export type OrgmemClient = Client<paths>;

export function createOrgmem({ baseUrl, apiKey, fetch }: OrgmemOptions): OrgmemClient {
  return createClient<paths>({ baseUrl: trimmed(baseUrl), headers: { Authorization: `Bearer ${apiKey}` }, ...(fetch && { fetch }) });
}

/** The address without its trailing slashes, so that a path can follow it. */
export const trimmed = (baseUrl: string) => baseUrl.replace(/\/+$/, '');
