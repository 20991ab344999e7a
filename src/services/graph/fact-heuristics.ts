import type { FactType } from '../../schemas/graph.ts';
import {
  ACKNOWLEDGEMENT,
  ADVERBS,
  ACK_LEAD,
  CHATTER_START,
  DONE_NARRATION,
  FINITE_VERB,
  NARRATION_GERUND,
  QUESTION_START,
  RULE_LEAD,
  CODE_MARKS,
  CONCLUSION_LEAD,
  DEICTIC_START,
  FIRST_PERSON,
  HOLDERS,
  IRREGULAR,
  LETS_DECIDE,
  NOT_PROSE_LINES,
  PRIVATE_BLOCK,
  PROHIBITION,
  REQUEST_VERBS,
  RULE_WORDS,
  SPEAKER_AT_START,
  SPEAKER_PREFIX,
  SPEAKERS,
  STATUS_REPORT,
  SYMPTOM,
  CHANGE_REPORT,
  THINKING_BLOCK,
  UNINFLECTED,
} from './capture-rules.ts';

/**
 * Extraction without any LLM (the embedded default), documented in docs/graph.md ("Remember" and
 * "What remember keeps"):
 * - the text is cut into its speakers' parts ("User: ...", "Assistant: ...", text before any
 *   prefix is the caller's, read as the user's), `<private>` and thinking blocks removed;
 * - lines that are not prose (code fences, commands, stack traces, logs, listings, diffs) go,
 *   then one candidate per sentence (split after . ! ? or a line break);
 * - chatter goes (acknowledgements, questions, requests, narration of the next step, status of
 *   the moment); a user's first-person statement names its holder ("I prefer tabs" becomes "The
 *   user prefers tabs.", "we squash-merge" "The team squash-merges."), a user's standing rule
 *   ("Always use pnpm") becomes "The user's rule: always use pnpm."; the assistant's sentences
 *   are kept only when they state something (no first person, no plan), its conclusion lead-ins
 *   ("It turns out that") removed;
 * - `preference` when the fact has a preference cue word, `episode` when it has a time cue,
 *   else `fact`;
 * - no expiry, and no supersession: without a model nothing can judge a contradiction. A fact is
 *   a duplicate when a current fact has the same words (order and case aside) or an embedding
 *   similarity of at least DUPLICATE_SIMILARITY; otherwise it is new.
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

type Role = 'user' | 'assistant' | 'other';

/** The text without its `<private>` blocks: what the server may store of it at all. */
export const withoutPrivate = (text: string) => text.replace(PRIVATE_BLOCK, '').trim();

export function heuristicFacts(content: string): ExtractedFact[] {
  const facts: ExtractedFact[] = [];
  for (const part of speakerParts(withoutPrivate(content).replace(THINKING_BLOCK, ''))) {
    if (part.role === 'other') continue;
    let subject: string | null = null;
    for (const clause of clauses(proseLines(part.text))) {
      // Only the user's pronouns are resolved: the assistant's sentences stand alone or not at all.
      const resolved: string = part.role === 'user' ? resolvePronoun(clause.text, subject) : clause.text;
      subject = subjectOf(resolved) ?? subject;
      const text = statement(resolved, part.role, clause.rule);
      if (text && !junkReason(text)) facts.push({ text, type: factType(text), valid_from: null, expires_at: null, time_phrase: null });
    }
  }
  return facts;
}

/**
 * Why a fact is not knowledge, or null when it is. The same test drops the offline candidates and
 * an LLM's facts that are chatter, a speaker's words as they were said, code or output.
 */
export function junkReason(fact: string): string | null {
  const text = fact.trim();
  if (SPEAKER_AT_START.test(text)) return 'speaker prefix';
  if (words(text) < 2) return 'fragment';
  if (/\?\s*$/.test(text) || QUESTION_START.test(text)) return 'question';
  if (ACKNOWLEDGEMENT.test(text)) return 'acknowledgement';
  if (CHATTER_START.test(text) || DONE_NARRATION.test(text) || (NARRATION_GERUND.test(text) && !FINITE_VERB.test(text))) return 'chatter';
  if (STATUS_REPORT.test(text)) return 'status of the moment';
  if (DEICTIC_START.test(text)) return 'not self-contained';
  if (FIRST_PERSON.test(text)) return 'first person: names no holder';
  if (NOT_PROSE_LINES.some((re) => re.test(text)) || CODE_MARKS.test(text)) return 'code or tool output';
  if (/\b(?:is|are|was|were|to|the|a|an|of|for|and|or|with|in|on|at|by|as|be)\s*[.!:]?$/i.test(text) || /:\s*$/.test(text)) return 'incomplete';
  return null;
}

/** Lowercase words only: "User likes tea." and "user likes  tea" are the same fact. */
export const normalizeFact = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .join(' ');

const words = (text: string) => text.split(/\s+/).filter((w) => /\p{L}|\p{N}/u.test(w)).length;
const factType = (text: string): FactType => (PREFERENCE_CUES.test(text) ? 'preference' : EPISODE_CUES.test(text) ? 'episode' : 'fact');

/** The text's parts by speaker; what comes before any prefix is the caller's own, read as the user's. */
function speakerParts(text: string): Array<{ role: Role; text: string }> {
  const parts: Array<{ role: Role; text: string }> = [];
  let role: Role = 'user';
  let from = 0;
  for (const m of text.matchAll(SPEAKER_PREFIX)) {
    parts.push({ role, text: text.slice(from, m.index) });
    role = SPEAKERS[m[1]!.toLowerCase()]!;
    from = m.index + m[0].length;
  }
  parts.push({ role, text: text.slice(from) });
  return parts.filter((p) => p.text.trim());
}

/** The prose of a part: code fences and lines that are output, code or listings removed, list markers and markup stripped. */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  let diff = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    if (/^(?:diff --git|@@ )/.test(line)) diff = true;
    if (!line.trim()) diff = false;
    if (diff || NOT_PROSE_LINES.some((re) => re.test(line))) continue;
    out.push(
      line
        .replace(/^\s*(?:[-*•+]|\d+[.)])\s+/, '')
        .replace(/\*\*|__|`/g, '')
        .trim(),
    );
  }
  return out;
}

/**
 * One candidate per clause: sentences split after . ! ? (not after an abbreviation such as
 * "e.g.") or at a line break, then at "; " and ", " (a piece of one word stays with the next). A
 * short lead-in ending in ":" is dropped; when it announces rules ("Rules for this repo:", "how I
 * like to work:") the clauses after it are rules.
 */
function clauses(lines: string[]): Array<{ text: string; rule: boolean }> {
  const out: Array<{ text: string; rule: boolean }> = [];
  for (const sentence of lines.flatMap((l) => l.split(/(?<!\b(?:e\.g|i\.e|etc|vs|approx|incl)\.)(?<=[.!?])\s+/i))) {
    // A question is dropped whole: its clauses are not statements either.
    if (sentence.includes('?')) continue;
    let body = sentence.trim();
    let rule = false;
    const lead = /^([\p{L}][\p{L}\p{N}\s'-]{0,59}):\s+(?=\S)/u.exec(body);
    if (lead && words(lead[1]!) > 1 && (words(lead[1]!) <= 4 || (words(lead[1]!) <= 8 && RULE_LEAD.test(lead[1]!)))) {
      rule = RULE_LEAD.test(lead[1]!);
      body = body.slice(lead[0].length);
    }
    // Rules listed after their lead-in are split at every comma; elsewhere a comma splits only
    // before a new clause ("Jonas owns payments, Lea is on call"), never before "so", "which" or
    // a phrase that completes the clause before it.
    const pieces = body.split(rule ? /;\s+|,\s+/ : /;\s+|,\s+(?=(?:and|but)\s|(?:the|our|my|their|we|i|they|he|she)\s+\S+\s+\S|[A-Z][\p{L}-]*\s+\S+\s+\S)/u);
    for (let i = 0; i < pieces.length; i++) {
      let piece = pieces[i]!.replace(/^(?:and|but|or)\s+/i, '').trim();
      while (words(piece) < 2 && i + 1 < pieces.length) piece = `${piece}, ${pieces[++i]!}`;
      if (piece) out.push({ text: piece, rule });
    }
  }
  return out;
}

const NOUN_PHRASE =
  /^((?:(?:the|our|my|their|this)\s+)?[\p{L}\p{N}][\p{L}\p{N}'-]*(?:\s+[\p{L}\p{N}][\p{L}\p{N}'-]*){0,3}?)\s+(?:is|are|was|were|has|have|keeps|runs|uses|owns|needs|signed|ships|takes|lives|crashes|fails)\b/iu;

/** The noun phrase a clause is about ("Acme Corp is our largest customer": "Acme Corp"), for the pronouns after it. */
function subjectOf(clause: string): string | null {
  const m = NOUN_PHRASE.exec(clause);
  return m && !/^(?:it|they|he|she|we|you|i|here|there|this|that|what|which|who|both|all)\b/i.test(m[1]!) ? m[1]! : null;
}

/** "they are on the Enterprise plan" after "Acme Corp is our largest customer": "Acme Corp are on ...". */
function resolvePronoun(clause: string, subject: string | null): string {
  if (!subject) return clause;
  return clause.replace(/^(?:it|they|he|she)\b(?=\s+(?!turns out)\S)/i, subject).replace(/^(?:its|their|his|her)\b/i, `${subject}'s`);
}

/** The clause as a fact of its speaker, or null when it is not knowledge. */
function statement(clause: string, role: 'user' | 'assistant', rule: boolean): string | null {
  if (clause.includes('?') || QUESTION_START.test(clause)) return null;
  let s = clause
    .replace(/[\u2018\u2019]/g, "'")
    .replace(CONCLUSION_LEAD, '')
    .replace(ACK_LEAD, '')
    .replace(/^please,?\s+/i, '')
    .trim();
  if (!s || ACKNOWLEDGEMENT.test(s) || STATUS_REPORT.test(s) || DEICTIC_START.test(s) || /^(?:it|they|he|she|its|their)\b/i.test(s)) return null;
  if (SYMPTOM.test(s) && !/\bbecause\b/i.test(s)) return null;
  if (role === 'assistant') {
    const narration = CHATTER_START.test(s) || DONE_NARRATION.test(s) || (NARRATION_GERUND.test(s) && !FINITE_VERB.test(s));
    if (narration || CHANGE_REPORT.test(s) || FIRST_PERSON.test(s) || /^(?:we|we'll|we're|you|you'll|you're|your|you've)\b/i.test(s) || REQUEST_VERBS.test(s))
      return null;
    return sentenceCase(s);
  }
  if (LETS_DECIDE.test(s)) return sentenceCase(s.replace(/^let's\s+/i, 'the team will '));
  const standing = PROHIBITION.test(s) || RULE_WORDS.test(s);
  if (/\b(?:you|your)\b/i.test(s) && !standing) return null;
  if (PROHIBITION.test(s) || (REQUEST_VERBS.test(s) && RULE_WORDS.test(s)) || (rule && !FIRST_PERSON.test(s) && !/^we\b/i.test(s))) {
    return `The user's rule: ${lowerFirst(s.replace(/^you (?:should|must)\s+/i, ''))}`;
  }
  if (CHATTER_START.test(s) || REQUEST_VERBS.test(s)) return null;
  return sentenceCase(named(s));
}

/**
 * A user's first-person statement with its holder named: "I" is the user, "we" the team (the
 * people the user works with); the verb after a subject (past any adverbs) takes the third person.
 */
function named(sentence: string): string {
  let s = sentence;
  for (const [re, holder, kind] of HOLDERS) s = s.replace(re, kind === 'subject' ? `${holder}\u0000` : holder);
  return s.replace(SUBJECT_VERB, (_m, gap: string, verb: string) => gap + inflect(verb)).replaceAll('\u0000', '');
}
const SUBJECT_VERB = new RegExp(`\u0000((?:\\s+(?:${ADVERBS.join('|')})\\b)*\\s+)([A-Za-z'-]+)`, 'gi');

/** "squash-merge" -> "squash-merges"; modals, past forms and "has" stay. */
function inflect(verb: string): string {
  const lower = verb.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower]!;
  return UNINFLECTED.test(lower) || /ed$/.test(lower) ? verb : thirdPerson(verb);
}

function thirdPerson(verb: string): string {
  const head = verb.split('-');
  const last = head.pop()!;
  const inflected = /(?:s|sh|ch|x|z|o)$/.test(last) ? `${last}es` : /[^aeiou]y$/.test(last) ? `${last.slice(0, -1)}ies` : `${last}s`;
  return [...head, inflected].join('-');
}

const sentenceCase = (s: string) => {
  const t = s.trim();
  return t.charAt(0).toUpperCase() + t.slice(1);
};
const lowerFirst = (s: string) => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);
