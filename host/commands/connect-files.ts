import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Editing a client's own config files for `orgmem connect`: orgmem's entry goes in or out, and
 * everything else the user had in the file stays as it was. A file orgmem cannot read as its
 * format is left alone, with an error naming it.
 */

export type JsonObject = Record<string, unknown>;

export const isJsonObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

export function readFileIfAny(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** The file as a JSON object; `{}` when it does not exist. */
export function readJsonObject(path: string): JsonObject {
  const text = readFileIfAny(path);
  if (text === undefined || !text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${(err as Error).message}); fix or move it first`);
  }
  if (!isJsonObject(parsed)) throw new Error(`${path} is not a JSON object; fix or move it first`);
  return parsed;
}

/**
 * Writes the file whole (the client never reads half of it). The entries hold the API key: a new
 * file is readable by its owner only, an existing one keeps its mode.
 */
export function writeText(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0o600;
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

export const writeJson = (path: string, value: JsonObject) => writeText(path, `${JSON.stringify(value, null, 2)}\n`);

/** `file[section][name] = entry`, the section made when missing; a section that is not an object is an error. */
export function setEntry(path: string, file: JsonObject, section: string, name: string, entry: unknown): JsonObject {
  const current = file[section] ?? {};
  if (!isJsonObject(current)) throw new Error(`"${section}" in ${path} is not an object; fix it first`);
  return { ...file, [section]: { ...current, [name]: entry } };
}

/** The file without `file[section][name]`, and without the section when nothing else is left in it; undefined when the entry is not there. */
export function withoutEntry(file: JsonObject, section: string, name: string): JsonObject | undefined {
  const current = file[section];
  if (!isJsonObject(current) || !(name in current)) return undefined;
  const rest: JsonObject = { ...current };
  delete rest[name];
  const out: JsonObject = { ...file, [section]: rest };
  if (!Object.keys(rest).length) delete out[section];
  return out;
}
