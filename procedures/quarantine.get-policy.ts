import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { trustPolicy } from '../src/schemas/trust.ts';
import { trustPolicyOf } from '../src/services/trust/policy.ts';
import { Q } from './quarantine-path.ts';

export default defineProcedure({
  name: 'quarantine.getPolicy',
  summary: 'What happens, per trust class, to a memory whose text tries to instruct an agent: quarantine, flag or off',
  rest: { method: 'GET', path: `${Q}/policy`, status: 200 },
  access: 'read',
  input: z.object({}),
  output: trustPolicy,
  handler: (ctx) => trustPolicyOf(ctx.app, ctx.tenant.id),
});
