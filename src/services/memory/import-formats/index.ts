import { z } from 'zod';
import { isObject, type ImportFormat } from './format.ts';
import { letta } from './letta.ts';
import { mem0 } from './mem0.ts';
import { pam } from './pam.ts';
import { supermemory } from './supermemory.ts';
import { zep } from './zep.ts';

/**
 * The other stores' files the import reads, once: the `format` enum, detection and the docs'
 * list come from here (docs/import.md). Detection tries them in this order, the most distinctive
 * shapes first (PAM names itself; mem0 and supermemory entries look alike but for their times).
 */
export const IMPORT_FORMATS: readonly ImportFormat[] = [pam, letta, zep, supermemory, mem0];

/** orgmem's own export, then the others. */
export const ORGMEM_FORMAT = 'orgmem';
export const IMPORT_FORMAT_NAMES = [ORGMEM_FORMAT, ...IMPORT_FORMATS.map((f) => f.name)] as [string, ...string[]];
export const importFormatName = z
  .enum(IMPORT_FORMAT_NAMES)
  .describe(
    `The file's format: ${ORGMEM_FORMAT} (an orgmem export) or ${IMPORT_FORMATS.map((f) => `${f.name}, ${f.label}`).join('; ')}. Detected when left out`,
  );

const isOrgmem = (data: unknown) =>
  isObject(data) && Array.isArray(data.memories) && (data.memories.length === 0 || (isObject(data.memories[0]) && 'text' in data.memories[0]));

/** The format a file looks like, or null. */
export function detectFormat(data: unknown): string | null {
  return IMPORT_FORMATS.find((f) => f.detect(data))?.name ?? (isOrgmem(data) ? ORGMEM_FORMAT : null);
}

export const formatNamed = (name: string) => IMPORT_FORMATS.find((f) => f.name === name);
