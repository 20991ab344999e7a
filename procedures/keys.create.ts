import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { timestamp } from '../src/schemas/fields.ts';
import { insertKey } from '../src/services/access/keys.ts';

export default defineProcedure({
  name: 'keys.create',
  summary: 'Create an API key (an agent identity); the key is shown only in this response',
  rest: { method: 'POST', path: '/v1/memory/keys', status: 201 },
  access: 'write',
  input: z.object({ label: z.string().min(1).max(100), read_only: z.boolean().default(false) }),
  output: z.object({ id: z.string(), label: z.string(), read_only: z.boolean(), created_at: timestamp, api_key: z.string() }),
  handler: async (ctx, input) => {
    const { row, apiKey } = await insertKey(ctx.app.platform, ctx.tenant.id, input.label, input.read_only);
    return { id: row.id, label: row.label, read_only: row.read_only, created_at: row.created_at.toISOString(), api_key: apiKey };
  },
});
