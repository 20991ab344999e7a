import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { checkAddress, checkedLookup, hostOf, PrivateTargetError, type TargetRule } from './public-target.ts';

/*
 * The one HTTP client for URLs a tenant chose (LLM endpoints, connectors and their OAuth token
 * endpoints, webhooks): every request, and every redirect it follows, connects only to an address
 * the rule allows, checked in the lookup of the socket itself (public-target.ts).
 */

/** Redirects followed for a GET or HEAD, each to a URL checked as the first one was. */
export const MAX_REDIRECTS = 5;

export type OutboundFetch = (url: string | URL | Request, init?: RequestInit) => Promise<Response>;

const agents = new WeakMap<TargetRule, Agent>();

function agentOf(rule: TargetRule): Agent {
  let agent = agents.get(rule);
  if (!agent) agents.set(rule, (agent = new Agent({ connect: { lookup: checkedLookup(rule) } })));
  return agent;
}

/** The refusal inside fetch's "fetch failed", so callers see why. */
function refusalIn(err: unknown): PrivateTargetError | null {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof PrivateTargetError) return e;
  return null;
}

/**
 * fetch under `rule`. A GET or HEAD follows up to MAX_REDIRECTS redirects itself, each hop checked
 * (credentials are not carried to another origin); any other method gets a redirect as its answer,
 * unfollowed. A refused target throws PrivateTargetError before anything is sent to it.
 */
export function outboundFetch(rule: TargetRule): OutboundFetch {
  return async (input, init = {}) => {
    // A Request's own method, headers and body are not read: callers pass them in `init`.
    let url = new URL(input instanceof Request ? input.url : input);
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PrivateTargetError(`${url.protocol} URLs are not fetched, only http and https`);
      // Node looks up names only: an address written in the URL is checked here.
      const host = hostOf(url);
      if (isIP(host)) checkAddress(rule, host, host);
      let res: Response;
      try {
        const sent = { ...init, headers, redirect: 'manual', dispatcher: agentOf(rule) } as UndiciRequestInit;
        res = (await undiciFetch(url, sent)) as unknown as Response;
      } catch (err) {
        throw refusalIn(err) ?? err;
      }
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location || (method !== 'GET' && method !== 'HEAD')) return res;
      await res.body?.cancel();
      if (hop === MAX_REDIRECTS) throw new Error(`${url.host} redirected more than ${MAX_REDIRECTS} times`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
      }
      url = next;
    }
  };
}
