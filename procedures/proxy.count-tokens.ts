import { defineProcedure } from '../src/pipeline/procedure.ts';
import { countTokensRequest, countTokensResponse } from '../src/schemas/proxy-messages.ts';
import { passCountTokens } from '../src/services/proxy/messages.ts';

export default defineProcedure({
  name: 'proxy.countTokens',
  summary: "Anthropic's count_tokens, passed through to the Anthropic upstream",
  description:
    "The request goes to the operator's Anthropic upstream as sent (no memory is added, nothing is stored), with anthropic-version " +
    'and anthropic-beta, and its count comes back as it answered it. Claude Code calls it through ANTHROPIC_BASE_URL.',
  rest: { method: 'POST', path: '/v1/proxy/v1/messages/count_tokens', status: 200 },
  access: 'read',
  errors: {
    TOO_MANY_REQUESTS: 'The monthly LLM spend cap is reached',
    BAD_GATEWAY: 'The Anthropic upstream failed or refused the request (its status and message are in detail)',
    SERVICE_UNAVAILABLE: 'No Anthropic upstream is configured on this server (ORGMEM_ANTHROPIC_BASE_URL)',
    GATEWAY_TIMEOUT: 'The Anthropic upstream did not answer within the timeout (ORGMEM_LLM_TIMEOUT_MS)',
  },
  input: countTokensRequest,
  output: countTokensResponse,
  handler: passCountTokens,
});
