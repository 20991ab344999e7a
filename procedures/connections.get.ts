import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { connectionView } from '../src/schemas/connectors.ts';
import { findConnection, toConnectionView } from '../src/services/connectors/connections.ts';
import { CONNECTION, connectionCollection, connectionPath, MISSING_CONNECTION } from './connection-path.ts';

export default defineProcedure({
  name: 'connections.get',
  summary: 'Get one connection (without credentials)',
  rest: { method: 'GET', path: CONNECTION, status: 200 },
  access: 'read',
  collection: connectionCollection('read'),
  errors: { NOT_FOUND: MISSING_CONNECTION },
  input: z.object(connectionPath),
  output: connectionView,
  handler: async (ctx, input) => toConnectionView(await findConnection(ctx.app.db, ctx.tenant.id, input.id)),
});
