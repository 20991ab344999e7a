import { defineProcedure } from '../src/pipeline/procedure.ts';
import { connectionCreate, connectionView } from '../src/schemas/connectors.ts';
import { providerNames, providers } from '../src/schemas/providers/index.ts';
import { createConnection } from '../src/services/connectors/connections.ts';

/** The config fields that name a tenant's own site (confluence's base_url): production refuses private addresses there. */
const sites = providers.flatMap((p) => (p.sync.by === 'service' && 'configField' in p.sync.api ? [`a ${p.name} ${p.sync.api.configField}`] : []));

export default defineProcedure({
  name: 'connections.create',
  summary: `Connect a provider (${providerNames.join(', ')}) to a collection`,
  description:
    'Credentials and config are checked for shape per provider (422 naming the missing field); a wrong token shows at ' +
    "the first sync as status `error` with the provider's message in `last_error`. The connection starts `active` and " +
    'the scheduler syncs it within a minute, then every `config.sync_interval_minutes` (60 by default). Credentials are ' +
    'encrypted at rest and never returned. `GET /v1/memory/connections/providers` lists what each provider takes.',
  rest: { method: 'POST', path: '/v1/memory/connections', status: 201 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { BAD_REQUEST: `(Production mode) ${sites.join(' or ')} on a private or loopback address` },
  input: connectionCreate,
  output: connectionView,
  handler: (ctx, input) => createConnection(ctx, input),
});
