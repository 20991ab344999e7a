import { z } from 'zod';
import { defineProvider } from './provider.ts';

/**
 * A tenant's own PostgreSQL: stored so the tenant's own job can find its target collection, but
 * not synced by the service (run by the tenant), and its credentials and config are whatever
 * the tenant keeps there.
 */
export const postgresProvider = defineProvider({
  name: 'postgres',
  label: 'PostgreSQL (run by you)',
  credentials: z.record(z.string(), z.unknown()),
  config: z.record(z.string(), z.unknown()),
  sync: { by: 'tenant' },
  oauth: null,
});
