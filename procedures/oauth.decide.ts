import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { collectionName } from '../src/schemas/fields.ts';
import { decide } from '../src/services/access/oauth.ts';

export default defineProcedure({
  name: 'oauth.decide',
  summary: 'Approve or deny an MCP client’s OAuth authorization request; answers where to send the browser back',
  description:
    'Approved, the client becomes an agent identity of the tenant (listed with the keys, read-only unless `read_write`; revoking it ends its tokens) and gets an authorization code; denied, it gets `access_denied`. Needs an admin key: it makes an identity, as creating a key does; a signed-in person (or their key) approves for themselves, and the client then acts for them (docs/people.md).',
  rest: { method: 'POST', path: '/v1/oauth/requests/{request}', status: 200 },
  access: 'write',
  keyRole: 'admin',
  forPerson: true,
  errors: {
    BAD_GATEWAY: 'The client’s metadata document cannot be read now',
    NOT_FOUND: 'The request is unknown, already decided or expired, or a collection named does not exist',
  },
  input: z.object({
    request: z.string().max(200),
    approve: z.boolean(),
    read_write: z.boolean().default(false),
    collections: z
      .array(collectionName)
      .min(1)
      .max(100)
      .optional()
      .describe('The only collections the client may touch (its grants still apply within them); absent: every collection its grants allow'),
  }),
  output: z.object({ redirect_to: z.string() }),
  handler: (ctx, input) => decide(ctx, input.request, input),
});
