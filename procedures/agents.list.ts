import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { agentSchema } from '../src/schemas/access.ts';
import { listAgents } from '../src/services/access/keys.ts';

export default defineProcedure({
  name: 'agents.list',
  summary: "The tenant's agent identities: its active API keys, without key material",
  rest: { method: 'GET', path: '/v1/memory/agents', status: 200 },
  access: 'read',
  input: z.object({}),
  output: z.array(agentSchema),
  handler: (ctx) => listAgents(ctx),
});
