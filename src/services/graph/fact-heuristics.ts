import type { FactType } from '../../schemas/graph.ts';

/**
 * Extraction without any LLM (the embedded default), documented in docs/graph.md:
 * - one fact per sentence (split after . ! ? or a line break), fragments with fewer than two
 *   words dropped;
 * - `preference` when the sentence has a preference cue word, `episode` when it has a time cue,
 *   else `fact`;
 * - no expiry, and no supersession: without a model nothing can judge a contradiction. A fact is
 *   a duplicate when a current fact has the same words or an embedding similarity of at least
 *   DUPLICATE_SIMILARITY; otherwise it is new.
 */
export const DUPLICATE_SIMILARITY = 0.97;

const PREFERENCE_CUES =
  /\b(like|likes|liked|love|loves|loved|prefer|prefers|preferred|favou?rite|hate|hates|dislike|dislikes|enjoy|enjoys|want|wants|wish|rather|can't stand|cannot stand|fan of|allergic)\b/i;
const EPISODE_CUES =
  /\b(yesterday|today|tonight|this morning|last (?:week|month|year|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|ago|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b/i;

export interface ExtractedFact {
  text: string;
  type: FactType;
  /** When the fact started to hold, resolved against the text's observed_at; null when the text does not say. */
  valid_from: string | null;
  expires_at: string | null;
  /** The words that said when ("last Tuesday"), kept as written. */
  time_phrase: string | null;
}

export function heuristicFacts(content: string): ExtractedFact[] {
  return content
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.split(/\s+/).filter((w) => /\p{L}|\p{N}/u.test(w)).length >= 2)
    .map((text) => ({
      text,
      type: PREFERENCE_CUES.test(text) ? 'preference' : EPISODE_CUES.test(text) ? 'episode' : 'fact',
      valid_from: null,
      expires_at: null,
      time_phrase: null,
    }));
}

/** Lowercase words only: "User likes tea." and "user likes  tea" are the same fact. */
export const normalizeFact = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join(' ');
