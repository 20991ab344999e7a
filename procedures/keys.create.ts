import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { keyRole } from '../src/schemas/access.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { insertKey } from '../src/services/access/keys.ts';
import { forbidden } from '../src/core/errors.ts';

export default defineProcedure({
  name: 'keys.create',
  summary: 'Create an API key (an agent identity); the key is shown only in this response',
  description:
    'An agent key unless `role` says admin: give agents agent keys, and keep admin keys for whoever manages the account. ' +
    'A key made by a signed-in person (or by a key that acts for one) acts for that person: it reads and writes at most what the person may (docs/people.md).',
  rest: { method: 'POST', path: '/v1/memory/keys', status: 201 },
  access: 'write',
  keyRole: 'admin',
  forPerson: true,
  errors: { FORBIDDEN: 'An admin key asked by a person who is not an admin' },
  input: z.object({
    label: z.string().min(1).max(100),
    role: keyRole.default('agent'),
    read_only: z.boolean().default(false),
    person: z
      .boolean()
      .default(false)
      .describe('A key for a person, not an agent: what it writes is of trust class `user` and is not quarantined by default (docs/trust.md)'),
  }),
  output: z.object({
    id: z.string(),
    label: z.string(),
    role: keyRole,
    read_only: z.boolean(),
    person: z.boolean(),
    acts_for: z.string().nullable().describe('The person this key acts for (docs/people.md), or null'),
    created_at: timestamp,
    api_key: z.string(),
  }),
  handler: async (ctx, input) => {
    if (input.role === 'admin' && ctx.agent.role !== 'admin') throw forbidden('Only an admin makes an admin key: ask for an agent key (role "agent")');
    const { row, apiKey } = await insertKey(ctx.app.platform, ctx.tenant.id, input.label, input.role, input.read_only, input.person, ctx.agent.for?.id ?? null);
    return {
      id: row.id,
      label: row.label,
      role: row.role,
      read_only: row.read_only,
      person: row.person,
      acts_for: row.person_id,
      created_at: row.created_at.toISOString(),
      api_key: apiKey,
    };
  },
});
