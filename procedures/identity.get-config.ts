import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { getIdentityConfig } from '../src/services/people/identity-config.ts';

/** The roles a first sign-in may give: an owner is never made by the provider. */
export const provisionedRole = z.enum(['admin', 'member', 'viewer']);

export const identityConfigView = z
  .object({
    configured: z.boolean().describe('Whether the tenant signs its people in through an OpenID Connect provider'),
    issuer: z.string().nullable().describe("The provider's issuer URL; null when none is configured"),
    client_id: z.string().nullable(),
    client_secret_set: z.boolean().describe('Whether a client secret is stored (it is never shown)'),
    allowed_domains: z.array(z.string()).describe('E-mail domains whose people are made members at their first sign-in'),
    allowed_groups: z.array(z.string()).describe('Groups of the claim whose people are made members at their first sign-in'),
    groups_claim: z.string().describe("The ID token's claim that lists the person's groups"),
    default_role: provisionedRole.describe('The role of a person made at a first sign-in'),
    updated_at: timestamp.nullable(),
  })
  .openapi('IdentityConfig');

const noProvider = (): z.infer<typeof identityConfigView> => ({
  configured: false,
  issuer: null,
  client_id: null,
  client_secret_set: false,
  allowed_domains: [],
  allowed_groups: [],
  groups_claim: 'groups',
  default_role: 'member',
  updated_at: null,
});

export default defineProcedure({
  name: 'identity.getConfig',
  summary: "The tenant's OpenID Connect provider for signing in to the dashboard (the client secret is never shown)",
  description: 'Answers `configured: false` when none is set (docs/sign-in.md).',
  rest: { method: 'GET', path: '/v1/memory/identity/config', status: 200 },
  access: 'read',
  keyRole: 'admin',
  input: z.object({}),
  output: identityConfigView,
  handler: async (ctx) => {
    const config = await getIdentityConfig(ctx);
    return config ? { configured: true, ...config } : noProvider();
  },
});
