import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Lets schemas carry `.openapi()` metadata for the generated document. Every file of this folder
// imports this one first, so the extension is in place before any schema is built.
extendZodWithOpenApi(z);

/** Field rules shared by many requests and responses (docs/contract.md, "Conventions"). */
export const collectionName = z
  .string()
  .regex(/^(?!\.)[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ - and not start with "."')
  .describe('Collection name');

/** JSON.stringify recurses: metadata nested deep enough to overflow the stack is refused, not thrown. */
function fits16KiB(metadata: Record<string, unknown>): boolean {
  try {
    return JSON.stringify(metadata).length <= 16_384;
  } catch {
    return false;
  }
}

export const metadataObject = z
  .record(z.string(), z.unknown())
  .refine(fits16KiB, 'metadata must serialise to at most 16 KiB')
  .describe('Arbitrary JSON object, at most 16 KiB serialised');

export const category = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, 'must be a lowercase slug of 1 to 64 characters [a-z0-9_-]')
  .describe('fact, preference, episode, other, document, email, connector, or any lowercase slug');

export const memoryText = z.string().min(1).max(10_000).describe('1 to 10000 characters');
export const importance = z.number().min(0).max(1).describe('0 to 1');
export const timestamp = z.string().describe('ISO 8601 UTC with milliseconds');
/**
 * A budget of a rendered context block in o200k_base tokens (docs/context.md): at least room for
 * the block's fixed wording and one short memory, at most what no prompt should spend on memory.
 */
export const tokenBudget = z.number().int().min(128).max(32_000);
/** A moment a client sends: ISO 8601 with a time zone offset (or Z). */
export const instant = z.iso.datetime({ offset: true });

/** Query-string booleans arrive as text; only these spellings are accepted. */
export const queryBool = z.preprocess((v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v), z.boolean());

export const noContent = z.null();
