import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { memorySchema } from '../src/schemas/memory.ts';
import { decideQuarantine } from '../src/services/memory/quarantine.ts';
import { inQuarantine, MISSING_HELD, Q } from './quarantine-path.ts';

export default defineProcedure({
  name: 'quarantine.reject',
  summary: 'Reject a held memory: it stays out of every answer and is archived',
  rest: { method: 'POST', path: `${Q}/{id}/reject`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  mcp: {
    tool: 'reject_memory',
    title: 'Reject a quarantined memory',
    description: 'Reject a memory held in quarantine: it is archived and stays held, served to nobody. Admin keys only.',
    destructive: true,
    idempotent: true,
  },
  errors: { NOT_FOUND: MISSING_HELD, CONFLICT: 'The memory was decided the other way already' },
  input: z.object(inQuarantine),
  output: memorySchema,
  handler: (ctx, input) => decideQuarantine(ctx, input.id, 'rejected'),
});
