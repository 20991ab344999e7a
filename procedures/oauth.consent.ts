import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { consentView } from '../src/services/access/oauth.ts';

export default defineProcedure({
  name: 'oauth.consent',
  summary: 'What an MCP client asks in an OAuth authorization request waiting for consent: its name, where the answer goes, the scopes',
  description: 'The dashboard’s consent page (docs/mcp.md, "Remote MCP with OAuth") shows this before the user approves or denies.',
  rest: { method: 'GET', path: '/v1/oauth/requests/{request}', status: 200 },
  access: 'read',
  errors: {
    BAD_GATEWAY: 'The client’s metadata document cannot be read now',
    NOT_FOUND: 'The request is unknown, already decided or expired',
  },
  input: z.object({ request: z.string().max(200) }),
  output: z.object({
    client_id: z.string(),
    client_name: z.string(),
    client_uri: z.string().optional(),
    redirect_host: z.string(),
    scopes: z.array(z.string()),
  }),
  handler: (ctx, input) => consentView(ctx, input.request),
});
