import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { syncResult } from '../src/schemas/connectors.ts';
import { syncNow } from '../src/services/connectors/sync.ts';
import { CONNECTION, connectionCollection, connectionPath, MISSING_CONNECTION } from './connection-path.ts';

export default defineProcedure({
  name: 'connections.sync',
  summary: 'Sync a connection now: records changed since its cursor are stored, then the cursor moves',
  description:
    'Answers when the sync ends. A failed sync is not an error answer: it answers 200 with `status: "error"` (or ' +
    '`"paused"` on the fifth failure in a row) and the provider\'s message in `last_error`, as the connection shows it. ' +
    'A successful sync of a paused connection makes it active again.',
  rest: { method: 'POST', path: `${CONNECTION}/sync`, status: 200 },
  access: 'write',
  collection: connectionCollection('write'),
  // Each page of records commits on its own, so what a sync stored stays when a later page fails.
  commits: 'in-steps',
  errors: {
    NOT_FOUND: MISSING_CONNECTION,
    BAD_REQUEST: 'A postgres connection: it is run by the tenant, not synced by the service',
    CONFLICT: 'A sync of this connection is running',
  },
  input: z.object(connectionPath),
  output: syncResult,
  handler: (ctx, input) => syncNow(ctx.app, ctx.tenant.id, input.id),
});
