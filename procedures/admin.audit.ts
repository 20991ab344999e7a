import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { listAudit, summarizeAudit } from '../src/services/events/audit.ts';

export default defineProcedure({
  name: 'admin.audit',
  summary: 'Operator: the audit log (writes, access-control and account changes), newest first',
  description:
    "Without tenant_id (or with the caller's own), the calling tenant's entries. With another tenant's id, aggregates " +
    'only: the number of each action per UTC day, with no actor, target or detail.',
  rest: { method: 'GET', path: '/v1/memory/admin/audit', status: 200 },
  access: 'admin',
  input: z.object({
    tenant_id: z.uuid().optional().describe("The tenant whose log to read (default: the caller); another tenant's is summarised"),
    days: z.coerce.number().int().min(1).max(3650).default(30),
    limit: z.coerce.number().int().min(1).max(1000).default(200),
  }),
  output: z.union([
    z.array(
      z.object({
        id: z.string(),
        at: z.string(),
        actor: z.object({ id: z.string().nullable(), label: z.string().nullable() }),
        action: z.string(),
        target: z.string(),
        detail: z.record(z.string(), z.unknown()),
      }),
    ),
    z.array(z.object({ day: z.string().describe('YYYY-MM-DD, UTC'), action: z.string(), count: z.number().int() })),
  ]),
  handler: ({ app, tenant }, { tenant_id = tenant.id, days, limit }) =>
    tenant_id === tenant.id ? listAudit(app.platform, tenant_id, days, limit) : summarizeAudit(app.platform, tenant_id, days, limit),
});
