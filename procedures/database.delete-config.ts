import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { deleteDatabaseConfig } from '../src/services/tenant-db/database-config.ts';
import { databaseConfigChange, NEEDS_SERVER } from './database.get-config.ts';

export default defineProcedure({
  name: 'database.deleteConfig',
  summary: "Go back to the platform's database (what your database holds stays there, untouched)",
  description:
    'The data in your database is neither copied back nor deleted: the service stops reading it. Data you had on the platform before ' +
    'setting the config is visible again. Answers the config now in effect with a `note` saying so.',
  rest: { method: 'DELETE', path: '/v1/memory/database/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: NEEDS_SERVER },
  input: z.object({}),
  output: databaseConfigChange,
  handler: (ctx) => deleteDatabaseConfig(ctx),
});
