import { defineProcedure } from '../src/pipeline/procedure.ts';
import { responsesRequest, responsesResponse } from '../src/schemas/proxy-responses.ts';
import { responses } from '../src/services/proxy/responses.ts';
import { storeCollection } from '../src/services/proxy/turn.ts';

export default defineProcedure({
  name: 'proxy.responses',
  summary: 'OpenAI Responses API with automatic memory, whole or streamed (Codex: a custom provider with wire_api "responses")',
  description:
    'Point an OpenAI client at base URL /v1/proxy/v1 with an orgmem API key. The words of the user in the new input (and, with ' +
    "previous_response_id, the thread's latest earlier ones, which the proxy keeps for every response it relays) are searched in " +
    'the memories the key may read; the context block goes to the model as a developer message before the new input, marked as ' +
    "recalled data. Everything else (instructions, tools, previous_response_id...) goes to the tenant's LLM endpoint " +
    '(POST {base_url}/responses) as sent, and its response comes back as it came, plus memvault; with stream: true its semantic ' +
    'events are relayed as they come (no [DONE]; memvault in X-Memvault-* headers). With store, the words of the user are queued ' +
    'for remember. When recall or storing fails, the chat goes on without it and says so. Usage counts toward the spend cap.',
  rest: { method: 'POST', path: '/v1/proxy/v1/responses', status: 200 },
  access: 'write',
  frontEnd: 'proxy',
  collection: [
    { collections: (input) => (input.store ? [storeCollection(input)] : []), permission: 'write' },
    { field: 'collection', permission: 'read' },
  ],
  // Linking the response to its thread is a write even without store.
  commits: 'in-steps',
  errors: {
    FORBIDDEN: 'store is true and the key may not write the collection the message goes to (the named one, else "default")',
    TOO_MANY_REQUESTS: "The monthly LLM spend cap is reached (the operator's endpoints are withheld until the month turns)",
    BAD_GATEWAY: 'The LLM endpoint failed or refused the request (its status and message are in detail), or did not answer with a response',
    SERVICE_UNAVAILABLE: 'No LLM endpoint is configured: no extraction config of the tenant, no server or platform default',
    GATEWAY_TIMEOUT: 'The LLM endpoint did not answer within the timeout (ORGMEM_LLM_TIMEOUT_MS)',
  },
  streams: (input) => input.stream === true,
  input: responsesRequest,
  output: responsesResponse,
  handler: responses,
});
