import { defineProcedure } from '../src/pipeline/procedure.ts';
import { proxyConfig } from '../src/schemas/proxy.ts';
import { putProxySettings } from '../src/services/proxy/settings.ts';

export default defineProcedure({
  name: 'proxy.putConfig',
  summary: "Set the chat proxy's tenant settings: the thread budget of a request that sets none (null: none)",
  description:
    'Every proxy surface (chat completions, Messages, Responses) trims a request that sets no max_thread_tokens to this budget ' +
    '(docs/proxy.md, "Long threads"); a request\'s own max_thread_tokens overrides it.',
  rest: { method: 'PUT', path: '/v1/memory/proxy/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  input: proxyConfig,
  output: proxyConfig,
  handler: (ctx, input) => putProxySettings(ctx, input),
});
