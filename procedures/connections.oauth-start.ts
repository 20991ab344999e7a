import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { containerTag, oauthProvider } from '../src/schemas/connectors.ts';
import { oauthProviderNames } from '../src/schemas/providers/index.ts';
import { oauthStart } from '../src/services/connectors/oauth.ts';

export default defineProcedure({
  name: 'connections.oauthStart',
  summary: `Start connecting ${oauthProviderNames.slice(0, -1).join(', ')} or ${oauthProviderNames.at(-1)} with OAuth: answers the provider's consent URL`,
  description:
    'Send the person to `authorize_url`. The provider redirects to the callback, which stores the tokens (encrypted) as a ' +
    'connection into `collection` and sends the browser to the dashboard with `?connection=<id>` (or `?oauth_error=`). ' +
    "The URL's state is sealed by the server, bound to this tenant, key, collection and name, and expires after 15 minutes. " +
    '`config` is the connection\'s config as a JSON object (slack needs `{"channel_id": ...}`).',
  rest: { method: 'GET', path: '/v1/memory/connections/oauth/{provider}/start', status: 200 },
  access: 'write',
  collection: { field: 'collection', permission: 'write' },
  errors: { SERVICE_UNAVAILABLE: "The operator has not configured this provider's OAuth app" },
  input: z.object({
    provider: oauthProvider,
    collection: collectionName,
    name: z.string().min(1).max(100).optional(),
    container_tag: containerTag,
    config: z.string().max(16_384).optional().describe("The connection's config, a JSON object"),
  }),
  output: z.object({ authorize_url: z.string(), expires_at: z.string() }),
  handler: async (ctx, input) => oauthStart(ctx, input.provider, input),
});
