/**
 * The conversation in a harness's transcript (JSONL, one event a line), as turns worth keeping:
 * what the user typed and what the assistant answered in text. Tool calls and their results,
 * thinking, meta and sidechain (subagent) lines, the context orgmem injected and text inside
 * `<private>...</private>` are left out (docs/hooks.md, "What is captured"). Both Claude Code's
 * lines (`type` user or assistant with a `message`) and Codex's (`type: "response_item"` with a
 * message `payload`) are read.
 */

/** Text parts of a message's content: a string, or parts of type text / input_text / output_text. */
function texts(content) {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out = [];
  for (const part of content) {
    // A tool's result is sent back as a user message: noise, and never the user's words.
    if (part?.type === 'tool_result' || part?.type === 'function_call_output') return null;
    if ((part?.type === 'text' || part?.type === 'input_text' || part?.type === 'output_text') && typeof part.text === 'string') out.push(part.text);
  }
  return out;
}

function classify(entry) {
  const at = typeof entry.timestamp === 'string' ? entry.timestamp : undefined;
  // Claude Code: {type: "user" | "assistant", message: {role, content}, isMeta?, isSidechain?}
  if ((entry.type === 'user' || entry.type === 'assistant') && entry.message && typeof entry.message === 'object') {
    if (entry.isMeta === true || entry.isSidechain === true) return null;
    const parts = texts(entry.message.content);
    return parts ? { role: entry.type, text: parts.join('\n'), at } : null;
  }
  // Codex: {type: "response_item", payload: {type: "message", role, content: [{type: "input_text" | "output_text", text}]}}
  const payload = entry.payload;
  if (entry.type === 'response_item' && payload?.type === 'message' && (payload.role === 'user' || payload.role === 'assistant')) {
    const parts = texts(payload.content);
    return parts ? { role: payload.role, text: parts.join('\n'), at } : null;
  }
  return null;
}

// Blocks that are not the user's or the assistant's own words: orgmem's injected memory (its
// wrapper and the recalled blocks inside), the harness's reminders and environment notes, slash
// command echoes. An opening tag without its end hides everything after it.
const DROPPED = ['private', 'orgmem-memory', 'recalled_memories', 'system-reminder', 'environment_context', 'user_instructions', 'local-command-stdout'];
const BLOCKS = new RegExp(`<(${DROPPED.join('|')})\\b[^>]*>[\\s\\S]*?(?:</\\1\\s*>|$)`, 'gi');
const COMMAND_TAGS = /<\/?command-(?:name|message|args)>/gi;

/**
 * Text as PostgreSQL can keep it, as the server's own `storable` (src/services/memory/storable.ts)
 * makes it: NUL and lone surrogates, which it refuses, go.
 */
const storable = (s) => s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');

/** The text without the blocks above, NUL or lone surrogates (which the server refuses), with runs of blank lines squeezed. */
export function clean(text) {
  let out = text;
  // Removing one block can join the halves of another tag around it: repeat until nothing changes.
  for (let before = ''; before !== out;) {
    before = out;
    out = out.replace(BLOCKS, '');
  }
  return storable(out)
    .replace(COMMAND_TAGS, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * The turns in `bytes`, the transcript from byte `base` on, complete lines only. A turn starts at
 * each user message with words of its own and runs to the next one.
 */
export function readTurns(bytes, base) {
  const turns = [];
  let pos = 0;
  while (pos < bytes.length) {
    const nl = bytes.indexOf(0x0a, pos);
    if (nl < 0) break; // a line still being written
    const start = pos;
    pos = nl + 1;
    let entry;
    try {
      entry = JSON.parse(bytes.subarray(start, nl).toString('utf8'));
    } catch {
      continue;
    }
    if (!entry || typeof entry !== 'object') continue;
    const line = classify(entry);
    const current = turns.at(-1);
    if (current) current.end = base + pos;
    if (!line) continue;
    const text = clean(line.text);
    if (line.role === 'user' && text) turns.push({ offset: base + start, end: base + pos, user: text, assistant: [], at: line.at });
    else if (line.role === 'assistant' && text && current) current.assistant.push(text);
  }
  return turns;
}

/** The longest text one remember takes (docs/graph.md). */
export const MAX_CHUNK = 10_000;

/**
 * A turn as the texts to remember: the exchange as `User: ...` then `Assistant: ...`, the speaker
 * prefixes the server reads to tell whose words are whose (docs/graph.md, "What remember keeps"),
 * cut at MAX_CHUNK characters. A piece that starts inside a speaker's words begins with that
 * speaker's prefix again, so the assistant's words are never read as the user's.
 */
export function turnTexts(turn) {
  const user = `User: ${turn.user}`;
  const whole = turn.assistant.length ? `${user}\n\nAssistant: ${turn.assistant.join('\n\n')}` : user;
  const answerAt = user.length + 2;
  const chunks = [];
  for (let i = 0; i < whole.length;) {
    const prefix = i === 0 || i === answerAt ? '' : i > answerAt ? 'Assistant: ' : 'User: ';
    let end = Math.min(i + MAX_CHUNK - prefix.length, whole.length);
    // Never between the two halves of a surrogate pair.
    if (end < whole.length && /[\uD800-\uDBFF]/.test(whole[end - 1])) end -= 1;
    chunks.push(prefix + whole.slice(i, end));
    i = end;
  }
  return chunks;
}
