import { z } from 'zod';
import type { Connector } from './connector.ts';

/**
 * A tenant's own PostgreSQL: stored so the tenant's own job can find its target collection, but
 * not synced by the service (api.md 4.10: run by the tenant), so it has no `pages`, and its
 * credentials and config are whatever the tenant keeps there.
 */
export const postgres: Connector = {
  provider: 'postgres',
  credentials: z.record(z.string(), z.unknown()),
  config: z.record(z.string(), z.unknown()),
};
