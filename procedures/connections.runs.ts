import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { runView } from '../src/schemas/connectors.ts';
import { listRuns } from '../src/services/connectors/connections.ts';
import { CONNECTION, connectionCollection, connectionPath, MISSING_CONNECTION } from './connection-path.ts';

export default defineProcedure({
  name: 'connections.runs',
  summary: "The connection's sync runs, newest first",
  rest: { method: 'GET', path: `${CONNECTION}/runs`, status: 200 },
  access: 'read',
  collection: connectionCollection('read'),
  errors: { NOT_FOUND: MISSING_CONNECTION },
  input: z.object({ ...connectionPath, limit: z.coerce.number().int().min(1).max(100).default(20).describe('1 to 100, default 20') }),
  output: z.array(runView),
  handler: (ctx, input) => listRuns(ctx, input.id, input.limit),
});
