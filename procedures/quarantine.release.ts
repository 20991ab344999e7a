import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { decideQuarantine } from '../src/services/memory/quarantine.ts';
import { inQuarantine, MISSING_HELD, Q } from './quarantine-path.ts';

export default defineProcedure({
  name: 'quarantine.release',
  summary: 'Release a held memory: it is served from now on',
  rest: { method: 'POST', path: `${Q}/{id}/release`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  mcp: {
    tool: 'release_memory',
    title: 'Release a quarantined memory',
    description: 'Release a memory held in quarantine after reading its text and reasons: agents are served it from then on. Admin keys only.',
    idempotent: true,
  },
  errors: { NOT_FOUND: MISSING_HELD, CONFLICT: 'The memory was decided the other way already' },
  input: z.object(inQuarantine),
  output: memorySchema,
  handler: (ctx, input) => decideQuarantine(ctx, input.id, 'released'),
});
