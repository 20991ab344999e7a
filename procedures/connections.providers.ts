import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { providerView } from '../src/schemas/connectors.ts';
import { listProviders } from '../src/services/connectors/connections.ts';

export default defineProcedure({
  name: 'connections.providers',
  summary: 'List the providers a connection can read: what each takes, and whether its OAuth is available on this server',
  description:
    "For a client's form: each provider's `credentials` and `config` as JSON Schema (titles and descriptions label the fields, " +
    '`format: password` marks a secret), whether the service syncs it, and whether the operator has configured its OAuth app ' +
    '(`available`), has not (`not_configured`: OAuth start answers 503), or it has none (`none`: tokens only). The same for every tenant.',
  rest: { method: 'GET', path: '/v1/memory/connections/providers', status: 200 },
  // A read: it tells the server's settings, no tenant's data, and read-only keys need the labels too.
  access: 'read',
  input: z.object({}),
  output: z.array(providerView),
  handler: async (ctx) => listProviders(ctx.app),
});
