import { z } from 'zod';
import { collectionName } from '../src/schemas/fields.ts';

/** Path parameters shared by the `C/...` procedures. */
export const inCollection = { collection: collectionName };
export const memoryPath = { collection: collectionName, id: z.string().describe('Memory id (UUID)') };

export const C = '/v1/memory/collections/{collection}';
