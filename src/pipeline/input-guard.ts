import { invalidInput } from '../core/errors.ts';
import { validatesInput, type AnyProcedure } from './procedure.ts';

/** Levels of objects and arrays an input may nest, the input object itself being the first. */
export const MAX_INPUT_DEPTH = 32;

// NUL, which PostgreSQL refuses in text and jsonb, and a UTF-16 surrogate without its other
// half, which no UTF-8 column can hold (a valid pair, an emoji, is fine).
const NUL = /\u0000/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const badText = (s: string) =>
  NUL.test(s) ? 'a NUL character (U+0000)' : LONE_SURROGATE.test(s) ? 'an unpaired UTF-16 surrogate (not valid Unicode)' : undefined;

/** A key as it can be shown in a path: its bad characters written as JSON escapes. */
const printable = (key: string) =>
  key.replace(new RegExp(`${NUL.source}|${LONE_SURROGATE.source}`, 'g'), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Objects and arrays are walked; file bytes (Uint8Array, Buffer) and scalars are not. */
function children(value: unknown): Array<[string, unknown]> | undefined {
  if (Array.isArray(value)) return value.map((v, i) => [String(i), v]);
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return undefined;
  return Object.entries(value);
}

/**
 * The first problem in one input field, in document order. The walk keeps its own stack, so a
 * value nested 100,000 levels costs MAX_INPUT_DEPTH steps and never the call stack.
 */
function fieldProblem(field: string, value: unknown): { path: string[]; message: string } | undefined {
  const stack: Array<{ path: string[]; value: unknown }> = [{ path: [field], value }];
  while (stack.length) {
    const { path, value } = stack.pop()!;
    if (typeof value === 'string') {
      const bad = badText(value);
      if (bad) return { path, message: `must not contain ${bad}` };
      continue;
    }
    const entries = children(value);
    if (!entries) continue;
    // The input object is level 1, so a field's own object or array is level 2.
    if (path.length + 1 > MAX_INPUT_DEPTH) return { path, message: `must not nest objects and arrays deeper than ${MAX_INPUT_DEPTH} levels` };
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const bad = Array.isArray(value) ? undefined : badText(key);
      if (bad) return { path: [...path, printable(key)], message: `key must not contain ${bad}` };
      stack.push({ path: [...path, key], value: child });
    }
  }
  return undefined;
}

/**
 * Screens an input before (and after) its schema reads it: text no database column can hold and
 * nesting that would overflow the stack of whatever recurses over it later (zod, JSON.stringify,
 * PostgreSQL's jsonb) are a 422 naming the field, for every procedure and front end alike. Only
 * the procedure's declared fields are looked at: unknown fields are ignored, so a procedure
 * without fields refuses nothing (as responses.ts documents), except where the input keeps them
 * (a loose object: the chat proxy forwards them). A procedure whose input cannot fail (the
 * beacon, procedure.ts's validatesInput) refuses nothing either: a field it could not store is
 * left out, as unusable. Paths name the field in the input (a REST front end that reads a field
 * from a bare-array body names it from there).
 */
export function screenInput(proc: AnyProcedure, input: unknown): unknown {
  const fields = Object.keys(proc.input.shape);
  if (!fields.length || !children(input) || Array.isArray(input)) return input;
  const record = input as Record<string, unknown>;
  const keepsUnknown = proc.input._zod.def.catchall?._zod.def.type === 'unknown';
  const screened = keepsUnknown ? Object.keys(record) : fields.filter((f) => f in record);
  const problems = screened.flatMap((f) => fieldProblem(f, record[f]) ?? []);
  if (!problems.length) return input;
  if (!validatesInput(proc)) {
    const unusable = new Set(problems.map((p) => p.path[0]));
    return Object.fromEntries(Object.entries(record).filter(([f]) => !unusable.has(f)));
  }
  throw invalidInput(problems.map(({ path, message }) => ({ path: path.join('.'), message })));
}
