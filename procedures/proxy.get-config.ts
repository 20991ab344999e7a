import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { proxyConfig } from '../src/schemas/proxy.ts';
import { getProxySettings } from '../src/services/proxy/settings.ts';

export default defineProcedure({
  name: 'proxy.getConfig',
  summary: "The chat proxy's tenant settings: the default thread budget (max_thread_tokens)",
  rest: { method: 'GET', path: '/v1/memory/proxy/config', status: 200 },
  access: 'read',
  input: z.object({}),
  output: proxyConfig,
  handler: (ctx) => getProxySettings(ctx),
});
