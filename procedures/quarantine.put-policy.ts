import { defineProcedure } from '../src/pipeline/procedure.ts';
import { trustPolicy, trustPolicyPatch } from '../src/schemas/trust.ts';
import { putTrustPolicy } from '../src/services/trust/policy.ts';
import { Q } from './quarantine-path.ts';

export default defineProcedure({
  name: 'quarantine.putPolicy',
  summary: 'Set, per trust class, what happens to a memory whose text tries to instruct an agent; the classes left out keep theirs',
  description: 'The default holds in quarantine what every class but `user` writes (docs/trust.md, "Quarantine"). A change applies to writes from then on.',
  rest: { method: 'PUT', path: `${Q}/policy`, status: 200 },
  access: 'write',
  keyRole: 'admin',
  input: trustPolicyPatch.strict(),
  output: trustPolicy,
  handler: (ctx, input) => putTrustPolicy(ctx.app, ctx.tenant.id, input),
});
