import { defineProcedure } from '../src/procedure.ts';
import { connectionCreate, connectionView } from '../src/schemas/connectors.ts';
import { createConnection } from '../src/services/connectors/connections.ts';

export default defineProcedure({
  name: 'connections.create',
  summary: 'Connect a provider (slack, notion, gdrive, gmail, linear, confluence, hubspot, postgres) to a collection',
  description:
    'Credentials and config are checked for shape per provider (422 naming the missing field); a wrong token shows at ' +
    'the first sync as status `error` with the provider\'s message in `last_error`. The connection starts `active` and ' +
    'the scheduler syncs it within a minute, then every `config.sync_interval_minutes` (60 by default). Credentials are ' +
    'encrypted at rest and never returned.',
  rest: { method: 'POST', path: '/v1/memory/connections', status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { BAD_REQUEST: '(Production mode) a confluence base_url on a private or loopback address' },
  input: connectionCreate,
  output: connectionView,
  handler: (ctx, input) => createConnection(ctx, input),
});
