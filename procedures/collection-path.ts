import { z } from 'zod';
import { collectionName } from '../src/schemas/fields.ts';

/** `C`: the path of one collection, under which most operations live. */
export const C = '/v1/memory/collections/{collection}';

/** Path parameters shared by the `C/...` procedures. */
export const inCollection = { collection: collectionName };
export const memoryPath = { collection: collectionName, id: z.string().describe('Memory id (UUID)') };

/** The NOT_FOUND of an operation naming a collection, or a memory in one. */
export const MISSING_COLLECTION = 'The collection does not exist';
export const MISSING_MEMORY = "The collection or the memory does not exist (another tenant's ids are not found either)";
