import { z } from 'zod';
import { defineProcedure } from '../src/procedure.ts';
import { listAudit } from '../src/services/events/audit.ts';

export default defineProcedure({
  name: 'admin.audit',
  summary: 'Operator: a tenant\'s audit log (writes, access-control and account changes), newest first',
  description: 'Without tenant_id, the calling tenant\'s own log.',
  rest: { method: 'GET', path: '/v1/memory/admin/audit', status: 200 },
  access: 'admin',
  input: z.object({
    tenant_id: z.uuid().optional().describe('The tenant whose log to read (default: the caller)'),
    days: z.coerce.number().int().min(1).max(3650).default(30),
    limit: z.coerce.number().int().min(1).max(1000).default(200),
  }),
  output: z.array(
    z.object({
      id: z.string(),
      at: z.string(),
      actor: z.object({ id: z.string().nullable(), label: z.string().nullable() }),
      action: z.string(),
      target: z.string(),
      detail: z.record(z.string(), z.unknown()),
    }),
  ),
  handler: (ctx, input) => listAudit(ctx.app.db, input.tenant_id ?? ctx.tenant.id, input.days, input.limit),
});
