import { trimmed } from './client.js';

/**
 * The base URLs to give the official SDKs (with an orgmem key as their API key) so that their
 * calls get memory: OpenAI's chat completions and Anthropic's Messages, and OpenAI's Responses.
 */
export function proxyBaseUrls(baseUrl: string) {
  const proxy = `${trimmed(baseUrl)}/v1/proxy`;
  return { chatCompletions: proxy, messages: proxy, responses: `${proxy}/v1` };
}

/** What the proxy recalled and stored for an answer, as a streamed answer's headers carry it. */
export interface MemvaultHeaders {
  /** The memories given to the model, in the order of the memory block (`score` null for those of its stable part). */
  memories: Array<{ id: string; score: number | null; collection: string }>;
  /** Whether the turn is to be stored when the stream ends. */
  stored: boolean;
  /** How many of the oldest turns were trimmed away. */
  turnsDropped: number;
  /** What failed of orgmem's part (the chat went on without it), or null. */
  memoryError: string | null;
}

/** The `X-Memvault-*` headers of a streamed proxy answer (the SDKs' `.withResponse()`), or null when it has none. */
export function memvaultHeaders(headers: Headers): MemvaultHeaders | null {
  const memories = headers.get('x-memvault-memories');
  if (memories === null) return null;
  return {
    memories: JSON.parse(memories) as MemvaultHeaders['memories'],
    stored: headers.get('x-memvault-stored') === 'true',
    turnsDropped: Number(headers.get('x-memvault-turns-dropped') ?? 0),
    memoryError: headers.get('x-memvault-memory-error'),
  };
}
