import type { z } from 'zod';
import type { agentSchema, grantSchema, keySchema } from '../../../src/schemas/access.ts';
import type { collectionSchema } from '../../../src/schemas/memory.ts';

/** The account pages' API shapes, taken from the service's own schemas (types only). */
export type AccountKey = z.infer<typeof keySchema>;
export type AccountAgent = z.infer<typeof agentSchema>;
export type AccountGrant = z.infer<typeof grantSchema>;
/** GET /v1/memory/collections/{name}/grants. */
export interface AccountGrants {
  collection: string;
  restricted: boolean;
  grants: AccountGrant[];
}
/** A collection as GET /v1/memory/collections lists it (with its memory count). */
export type AccountCollection = z.infer<typeof collectionSchema>;
