import type { FakeCall, FakeHandler, FakeLlm } from './openai.ts';

/**
 * Deterministic stand-ins for the model's judgement, for the fake LLM:
 * - extraction: one fact per sentence (of the user's part of a proxied exchange); "likes/prefers/loves/hates" make a preference, a leading
 *   "Yesterday" or "Last" an episode; "(until <ISO time>)" sets expires_at and is removed.
 * - judging: an oracle. A new fact replaces the stored fact named for it in `replaces`, when that
 *   fact is among the similar facts the service sent; a stored fact with the same words is a
 *   duplicate; anything else is new. The oracle can only pick what the service retrieved, so the
 *   service's neighbour search is what a contradiction case really tests.
 */
export const sentences = (text: string) =>
  text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** A proxied exchange's text (`User: ...` then `Assistant: ...`): the user's words, as a model keeps the facts the user stated. */
const userPart = (text: string) => text.replace(/User: ([\s\S]*?)\n\nAssistant: [\s\S]*$/, '$1');

export const extractBySentence: FakeHandler = (call) => ({
  json: {
    facts: sentences(userPart(call.user)).map((s) => {
      const until = /\s*\(until ([^)]+)\)/.exec(s);
      const text = until ? s.replace(until[0], '') : s;
      const type = /\b(likes|prefers|loves|hates|dislikes)\b/i.test(text) ? 'preference' : /^(yesterday|last)\b/i.test(text) ? 'episode' : 'fact';
      return { text, type, expires_at: until ? until[1] : null };
    }),
  },
});

interface JudgeMessage {
  facts: Array<{ fact_index: number; text: string; similar: Array<{ id: string; text: string }> }>;
}

export function oracleJudge(replaces: Map<string, string>): FakeHandler {
  return (call: FakeCall) => {
    const msg = JSON.parse(call.user) as JudgeMessage;
    return {
      json: {
        decisions: msg.facts.map((f) => {
          const old = replaces.get(norm(f.text));
          const replaced = old && f.similar.find((s) => norm(s.text) === old);
          if (replaced) return { fact_index: f.fact_index, relation: 'supersedes', target_id: replaced.id };
          const same = f.similar.find((s) => norm(s.text) === norm(f.text));
          if (same) return { fact_index: f.fact_index, relation: 'duplicate', target_id: same.id };
          return { fact_index: f.fact_index, relation: 'new', target_id: null };
        }),
      },
    };
  };
}

/** Installs both on a fake; `replaces` maps a new fact's text to the text of the fact it replaces. */
export function playMemoryModel(fake: FakeLlm, replaces: Array<[newer: string, older: string]> = []) {
  const table = new Map(replaces.map(([a, b]) => [norm(a), norm(b)]));
  fake.on('extract_facts', extractBySentence);
  fake.on('judge_facts', oracleJudge(table));
  return {
    /** Adds rules later (the contradiction suite registers each case's own). */
    replaces: (newer: string, older: string) => table.set(norm(newer), norm(older)),
  };
}
