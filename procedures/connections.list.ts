import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { connectionView } from '../src/schemas/connectors.ts';
import { listConnections } from '../src/services/connectors/connections.ts';

export default defineProcedure({
  name: 'connections.list',
  summary: 'List connections (without credentials), newest first; paused ones included',
  description: 'Connections into restricted collections the key may not read are left out.',
  rest: { method: 'GET', path: '/v1/memory/connections', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.array(connectionView),
  handler: (ctx) => listConnections(ctx),
});
