import { RECALLED_PREAMBLE, recalledBlock } from '../../src/core/recalled.ts';
import { call, collectionPath, HttpError, type Server } from './client.ts';

/**
 * What the hooks put in the model's context (docs/hooks.md): the memory of the session's
 * collection, through the context endpoint (docs/context.md), whose blocks mark recalled text as
 * data. Everything orgmem injects is wrapped in one <orgmem-memory> element, so that capture can
 * leave it out of what it stores.
 */

/** Budgets: a session start may take a moment; a prompt may not (bench/README.md, "Hooks"). */
export const SESSION_START_MS = 3000;
export const PROMPT_MS = 800;
/**
 * One budget for both: the stable part is chosen within half of it, so the prompt's search leaves
 * out exactly the memories the session start showed.
 */
const CONTEXT_TOKENS = 1600;
const PROMPT_LIMIT = 10;
/** The profile's share of the session start, in characters: the whole stays a few KB. */
const PROFILE_CHARS = 2000;

interface ContextAnswer {
  context: string;
  stable: { text: string };
  query: { text: string; memories: unknown[] };
}

/** A project's collection does not exist before its first capture: nothing to recall, nothing wrong. */
const isMissing = (err: unknown) => err instanceof HttpError && err.status === 404;

const wrap = (collection: string, body: string) => `<orgmem-memory collection="${collection}">\n${body}\n</orgmem-memory>`;

/** SessionStart: the collection's profile and its stable memories (pinned, current facts and preferences). */
export async function sessionStartContext(server: Server, collection: string): Promise<string> {
  const signal = AbortSignal.timeout(SESSION_START_MS);
  const [context, profile] = await Promise.allSettled([
    // A conversation without a user message: the stable part only, the same for every session.
    call<ContextAnswer>(server, 'POST', collectionPath(collection, 'context'), {
      body: { messages: [{ role: 'system', content: 'A new coding session starts.' }], max_tokens: CONTEXT_TOKENS },
      signal,
    }),
    call<{ profile: string; based_on: number }>(server, 'GET', collectionPath(collection, 'profile'), { signal }),
  ]);
  const stable = context.status === 'fulfilled' ? context.value.context.trim() : '';
  const written = profile.status === 'fulfilled' && profile.value.based_on > 0 ? profile.value.profile.trim().slice(0, PROFILE_CHARS) : '';
  if (!stable && !written) {
    // Nothing to show because a request failed (a server down, slow or refusing), not because the
    // collection is new: the hook says why on stderr (docs/hooks.md). When one of the two answered,
    // what it gave is shown and the other's failure is not an error.
    const failed = [context, profile].find((r) => r.status === 'rejected' && !isMissing(r.reason));
    if (failed?.status === 'rejected') throw failed.reason;
    return '';
  }
  const parts = [stable || RECALLED_PREAMBLE];
  if (written) parts.push(`The profile of this project, written from its memories:\n${recalledBlock([{ collection, profile: written }])}`);
  return wrap(collection, parts.join('\n\n'));
}

/** UserPromptSubmit: the memories recalled for the prompt, without the stable part the session start gave. */
export async function promptContext(server: Server, collection: string, prompt: string): Promise<string> {
  const query = prompt.trim().slice(0, 10_000);
  if (!query) return '';
  const answer = await call<ContextAnswer>(server, 'POST', collectionPath(collection, 'context'), {
    body: { query, max_tokens: CONTEXT_TOKENS, limit: PROMPT_LIMIT },
    signal: AbortSignal.timeout(PROMPT_MS),
  }).catch((err: unknown) => {
    if (isMissing(err)) return undefined;
    throw err;
  });
  if (!answer?.query.memories.length) return '';
  // The block opens with the preamble only when the stable part is empty; it is said either way.
  const text = answer.stable.text ? `${RECALLED_PREAMBLE}\n\n${answer.query.text.trim()}` : answer.query.text.trim();
  return wrap(collection, text);
}
