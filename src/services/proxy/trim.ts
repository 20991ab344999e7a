import { countTokens } from '../context/tokens.ts';

/**
 * How a proxy surface's conversation splits into turns (docs/proxy.md, "Long threads"): the
 * leading messages that are kept whatever happens (the system prompt), where a turn starts (a
 * message of the user's own words: a tool result belongs to the turn of its tool call), and which
 * messages hold a breakpoint of the client's prompt cache (Anthropic's cache_control).
 */
export interface TurnRules<M> {
  fixed(message: M): boolean;
  startsTurn(message: M): boolean;
  pinned(message: M): boolean;
}

/** A message's tokens: its JSON (text, tool calls, tool results, inline files), counted with o200k_base. */
export const tokensOf = (message: unknown) => countTokens(JSON.stringify(message));

/**
 * The conversation within `budget` tokens (`fixed` counts what goes beside it, Anthropic's
 * `system` or Responses' `instructions`): the oldest turns dropped whole until the rest fits,
 * never the leading system messages, never the last turn (it holds the latest words of the
 * user), and never a turn holding a cache breakpoint or any turn after it (trimming stops before
 * it: dropping what precedes a breakpoint would change the cached prefix anyway). Nothing is
 * summarised. No budget: the conversation as it came.
 */
export function trimThread<M>(messages: M[], budget: number | undefined, rules: TurnRules<M>, fixed = 0): { messages: M[]; dropped: number } {
  if (budget === undefined) return { messages, dropped: 0 };
  let head = 0;
  while (head < messages.length && rules.fixed(messages[head]!)) head++;
  // Turns: [start, end) ranges after the head; messages before the first turn's start join it.
  const starts = [head];
  for (let i = head + 1; i < messages.length; i++) if (rules.startsTurn(messages[i]!)) starts.push(i);
  const sizes = messages.map(tokensOf);
  let total = fixed + sizes.reduce((a, b) => a + b, 0);
  let dropped = 0;
  let cut = head;
  while (total > budget && dropped < starts.length - 1) {
    const end = starts[dropped + 1]!;
    const turn = messages.slice(cut, end);
    if (turn.some(rules.pinned)) break;
    total -= sizes.slice(cut, end).reduce((a, b) => a + b, 0);
    cut = end;
    dropped++;
  }
  return { messages: dropped ? [...messages.slice(0, head), ...messages.slice(cut)] : messages, dropped };
}
