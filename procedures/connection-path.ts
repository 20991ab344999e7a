import { z } from 'zod';
import type { Permission } from '../src/services/access/grants.ts';
import { collectionOfConnection } from '../src/services/connectors/connections.ts';

/** Procedures on one connection: its id in the path, and the grants of the collection it writes to. */
export const CONNECTION = '/v1/memory/connections/{id}';
export const connectionPath = { id: z.string().describe('Connection id') };
export const MISSING_CONNECTION = 'No connection of this tenant has this id';
export const connectionCollection = (permission: Permission) => ({ permission, of: collectionOfConnection });
