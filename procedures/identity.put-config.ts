import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { putIdentityConfig } from '../src/services/people/identity-config.ts';
import { identityConfigView, provisionedRole } from './identity.get-config.ts';

const issuer = z
  .string()
  .max(2000)
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be the http(s) URL of an OpenID Connect issuer')
  .describe('The issuer URL, whose /.well-known/openid-configuration is read (docs/sign-in.md, "Providers")');

const domain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i, 'must be a domain such as example.com');

export default defineProcedure({
  name: 'identity.putConfig',
  summary: "Set the tenant's OpenID Connect provider: people sign in to the dashboard and approve MCP clients through it",
  description:
    "The issuer's discovery document is read first; if it cannot be (no answer within 5 s, not JSON, another issuer, or, in production " +
    'mode, a private address or a plain-http issuer) the answer is 400 with the reason and nothing is saved. The client secret is stored ' +
    'encrypted and never shown; leave it out to keep the stored one (for the same client id), send null to clear it.',
  rest: { method: 'PUT', path: '/v1/memory/identity/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: "The issuer's discovery document could not be read or used" },
  input: z.object({
    issuer,
    client_id: z.string().min(1).max(500),
    client_secret: z.string().min(1).max(2000).nullable().optional(),
    allowed_domains: z.array(domain).max(100).default([]),
    allowed_groups: z.array(z.string().min(1).max(500)).max(100).default([]),
    groups_claim: z.string().min(1).max(100).default('groups'),
    default_role: provisionedRole.default('member'),
  }),
  output: identityConfigView,
  handler: async (ctx, input) => ({ configured: true, ...(await putIdentityConfig(ctx, input)) }),
});
