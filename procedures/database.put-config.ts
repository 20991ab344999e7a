import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { putDatabaseConfig } from '../src/services/tenant-db/database-config.ts';
import { databaseConfigChange, NEEDS_SERVER } from './database.get-config.ts';

const postgresUrl = z
  .string()
  .max(2000)
  .refine((s) => /^postgres(ql)?:\/\//.test(s) && URL.canParse(s), 'must be a PostgreSQL connection URL: postgres://user:password@host:5432/database')
  .describe('postgres://user:password@host:port/database (query parameters such as sslmode=require are passed on)');

export default defineProcedure({
  name: 'database.putConfig',
  summary: "Keep your collections, memories, caches and jobs' data in your own PostgreSQL (saved only if it connects and migrates)",
  description:
    'Connects (5 s at most), checks that the pgvector extension is available, refuses a database that holds an orgmem platform, and ' +
    "creates or updates orgmem's tables there; if any step fails the answer is 400 with the reason and nothing is saved. The " +
    'connection string is stored encrypted; GET shows it with the password masked. From the next request on, collections, memories, ' +
    'grants, search caches, remember jobs, file ingestion and connections live there; the tenant, its keys, configs, audit log and ' +
    'usage stay on the platform. Data stored before is not moved (see `note`): export it first and import it after.',
  rest: { method: 'PUT', path: '/v1/memory/database/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: {
    BAD_REQUEST:
      'The database could not be reached, has no pgvector, is an orgmem platform database, or could not be migrated; (production mode) its host, ' +
      `or one of its hosts, is a private, loopback or other internal address or a Unix socket; or: ${NEEDS_SERVER}`,
  },
  input: z.object({ connection_string: postgresUrl }),
  output: databaseConfigChange,
  handler: (ctx, input) => putDatabaseConfig(ctx, input.connection_string),
});
