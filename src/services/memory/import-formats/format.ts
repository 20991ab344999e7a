import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * What every importer of another store's file shares (docs/import.md): the shape of a format,
 * of one record read from it, and the field rules the parsers use.
 */

/** A memory as a format's parser makes it: an import item (validated again by the import, as any item is). */
export interface ImportedItem {
  text: string;
  category?: string;
  importance?: number;
  metadata: Record<string, unknown>;
  container_tag?: string | null;
  observed_at?: string;
  valid_from?: string;
  valid_to?: string | null;
  pinned?: boolean;
  archived?: boolean;
  collection: string;
}

/**
 * One record of the file, in file order: the memory it becomes and its id at the source (the
 * import stores it once), or why it cannot be imported. `at` is where it is in the file
 * (`results.3`, `agents.0.messages.12`), named in its error.
 */
export type SourceRecord = { at: string; sourceId: string; item: ImportedItem } | { at: string; error: string };

export interface ParseOptions {
  /** Letta: the agents' messages too, not only their memory blocks. */
  includeMessages: boolean;
}

export interface ImportFormat {
  name: string;
  /** For the docs and the procedure's description. */
  label: string;
  /** Whether a file looks like this format (checked in the registry's order). */
  detect(data: unknown): boolean;
  /** The records, or a sentence saying why the file is not this format at all. */
  parse(data: unknown, options: ParseOptions): SourceRecord[] | string;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A source's time as orgmem keeps it: ISO 8601 in UTC; one given without an offset is read as UTC. */
export const sourceTime = z.string().transform((s, ctx) => {
  const withOffset = /(?:[zZ]|[+-]\d\d:?\d\d)$/.test(s) ? s : `${s}Z`;
  const ms = Date.parse(withOffset);
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: 'custom', message: 'not a date and time' });
    return z.NEVER;
  }
  return new Date(ms).toISOString();
});

/** A source id: a string, or a number as some stores write them. */
export const sourceId = z.union([z.string().min(1).max(512), z.number().int().transform(String)]);

const MAX_ISSUES = 3;

/** Zod errors as one sentence naming where and the field: `results.3.memory: Invalid input...`. */
export const issuesAt = (at: string, error: z.ZodError) =>
  error.issues
    .slice(0, MAX_ISSUES)
    .map((i) => `${[at, ...i.path.map(String)].join('.')}: ${i.message}`)
    .join('; ');

/** A record that cannot be imported, with its zod errors. */
export const recordError = (at: string, error: z.ZodError): SourceRecord => ({ at, error: issuesAt(at, error) });

/** Validates one record with its format's schema and maps it, or names what is wrong with it. */
export function readRecord<S extends z.ZodType>(
  at: string,
  raw: unknown,
  schema: S,
  map: (r: z.output<S>) => Omit<Extract<SourceRecord, { item: unknown }>, 'at'>,
): SourceRecord {
  const parsed = schema.safeParse(raw);
  return parsed.success ? { at, ...map(parsed.data) } : recordError(at, parsed.error);
}

/**
 * A source's scope name (an agent, an app) as a collection name: characters a collection name
 * cannot hold become `-`, cut at 64; `fallback` when nothing is left.
 */
export function collectionFrom(name: string | null | undefined, fallback: string): string {
  const cleaned = (name ?? '')
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^\.+/, '')
    .slice(0, 64);
  return cleaned || fallback;
}

/** A category slug from a source's type or category, `fallback` when it makes none. */
export function categoryFrom(value: string | null | undefined, fallback: string): string {
  const slug = (value ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return slug || fallback;
}

/** A short stable id for records whose ids are local to their file (an agent file's `block-0`). */
export const contentId = (...parts: string[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);

/** The fields of the source's record kept in metadata (null and undefined left out). */
export function kept(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined));
}

/** The records of a file that is a list, or an object holding one under one of `keys`. */
export function listIn(data: unknown, keys: string[]): { key: string; items: unknown[] } | null {
  if (Array.isArray(data)) return { key: '', items: data };
  if (!isObject(data)) return null;
  for (const key of keys) if (Array.isArray(data[key])) return { key, items: data[key] as unknown[] };
  return null;
}

/** `results.3`, or `3` for a bare list. */
export const atIndex = (key: string, i: number) => (key ? `${key}.${i}` : String(i));
