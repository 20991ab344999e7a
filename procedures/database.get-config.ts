import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { getDatabaseConfig } from '../src/services/tenant-db/database-config.ts';

/** What GET answers; PUT and DELETE add a `note` on the data left where it was. */
export const databaseConfigView = z
  .object({
    available: z.boolean().describe("Whether this server can keep a tenant's data in its own database (not when it runs on its embedded database)"),
    unavailable_reason: z.string().nullable().describe('Why a tenant database is not available here; null when it is'),
    configured: z.boolean().describe('Whether the tenant has its own database'),
    database: z.enum(['own', 'platform']).describe("Where the tenant's data lives now"),
    connection_string: z.string().nullable().describe('The connection string with its password masked; null on the platform database'),
    created_at: timestamp.nullable(),
    updated_at: timestamp.nullable(),
  })
  .openapi('DatabaseConfig');

export const databaseConfigChange = databaseConfigView
  .extend({ note: z.string().describe('What happens to the data stored before the change') })
  .openapi('DatabaseConfigChange');

export const NEEDS_SERVER = 'The service runs on its embedded database: a tenant database needs it to run on a PostgreSQL server';

export default defineProcedure({
  name: 'database.getConfig',
  summary: "The tenant's own PostgreSQL database (password masked), or that its data lives on the platform's",
  description:
    'On a server running on its embedded database a tenant database is not available: GET answers `available: false` with ' +
    'the reason (`unavailable_reason`), and PUT and DELETE answer 400.',
  rest: { method: 'GET', path: '/v1/memory/database/config', status: 200 },
  access: 'read',
  input: z.object({}),
  output: databaseConfigView,
  handler: (ctx) => getDatabaseConfig(ctx),
});
