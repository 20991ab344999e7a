import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { oauthProvider } from '../src/schemas/connectors.ts';
import { oauthCallback } from '../src/services/connectors/oauth.ts';

export default defineProcedure({
  name: 'connections.oauthCallback',
  summary: 'Where the provider sends the browser back (public): stores the connection and redirects to the dashboard',
  description:
    'The state is checked first: a missing, tampered or expired one answers 400. Otherwise the answer is a 302 to the ' +
    "dashboard URL (ORGMEM_DASHBOARD_URL, else this server's `/`) with `?provider=` and `?connection=<id>`, or " +
    '`?oauth_error=<reason>` when the person declined or the code exchange failed.',
  rest: { method: 'GET', path: '/v1/memory/connections/oauth/{provider}/callback', status: 302 },
  access: 'public',
  errors: { BAD_REQUEST: 'The state is missing, tampered with or expired', SERVICE_UNAVAILABLE: "The operator has not configured this provider's OAuth app" },
  input: z.object({
    provider: oauthProvider,
    code: z.string().max(4096).optional(),
    state: z.string().max(16_384).optional(),
    error: z.string().max(1024).optional(),
  }),
  output: z.object({ location: z.string().describe('The dashboard URL the browser is sent to (the Location header)') }),
  handler: (ctx, input) => oauthCallback(ctx, input.provider, input),
});
