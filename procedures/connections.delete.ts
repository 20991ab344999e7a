import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteConnection } from '../src/services/connectors/connections.ts';
import { CONNECTION, connectionCollection, connectionPath, MISSING_CONNECTION } from './connection-path.ts';

export default defineProcedure({
  name: 'connections.delete',
  summary: 'Remove a connection and its runs; the memories it synced stay in the collection',
  rest: { method: 'DELETE', path: CONNECTION, status: 204 },
  access: 'write',
  collection: connectionCollection('write'),
  errors: { NOT_FOUND: MISSING_CONNECTION },
  input: z.object(connectionPath),
  output: noContent,
  handler: async (ctx, input) => {
    await deleteConnection(ctx, input.id);
    return null;
  },
});
