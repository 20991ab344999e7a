import { defineProcedure } from '../src/pipeline/procedure.ts';
import { messagesRequest, messagesResponse } from '../src/schemas/proxy-messages.ts';
import { messages } from '../src/services/proxy/messages.ts';
import { storeCollection } from '../src/services/proxy/turn.ts';

export default defineProcedure({
  name: 'proxy.messages',
  summary: 'Anthropic Messages API with automatic memory, whole or streamed (Claude Code: ANTHROPIC_BASE_URL)',
  description:
    'Point an Anthropic client (or Claude Code, with ANTHROPIC_BASE_URL) at base URL /v1/proxy with an orgmem API key, sent as ' +
    "x-api-key or as a bearer token. The latest words of the user (text blocks, Claude Code's <system-reminder> blocks left out) " +
    'are searched in the memories the key may read; the context block goes to the model as one text block appended to the last ' +
    'user message, after every cache_control breakpoint of the client, marked as recalled data. Everything else (system, tools, ' +
    "images, documents, thinking blocks and their signatures, anthropic-version and anthropic-beta) goes to the operator's " +
    'Anthropic upstream as sent, and its answer comes back as it came, plus memvault; with stream: true its events are relayed ' +
    'as they come (memvault in X-Memvault-* headers). Compaction requests, Claude Code side queries (its system prompt, no tools) ' +
    'and one-token probes pass through untouched. With store, a conversation ending with words of the user queues them for ' +
    'remember. When recall or storing fails, the chat goes on without it and says so in memvault.memory_error. Usage counts ' +
    "toward the spend cap. Error bodies also carry Anthropic's envelope (type: error, error: {type, message}), which Anthropic " +
    'clients raise as their own errors.',
  rest: { method: 'POST', path: '/v1/proxy/v1/messages', status: 200 },
  access: 'write',
  frontEnd: 'proxy',
  collection: [
    { collections: (input) => (input.store ? [storeCollection(input)] : []), permission: 'write' },
    { field: 'collection', permission: 'read' },
  ],
  readWhen: (input) => !input.store,
  commits: 'in-steps',
  errors: {
    FORBIDDEN: 'store is true and the key may not write the collection the message goes to (the named one, else "default")',
    TOO_MANY_REQUESTS: 'The monthly LLM spend cap is reached',
    BAD_GATEWAY: 'The Anthropic upstream failed or refused the request (its status and message are in detail), or did not answer with a message',
    SERVICE_UNAVAILABLE: 'No Anthropic upstream is configured on this server (ORGMEM_ANTHROPIC_BASE_URL)',
    GATEWAY_TIMEOUT: 'The Anthropic upstream did not answer within the timeout (ORGMEM_LLM_TIMEOUT_MS)',
  },
  streams: (input) => input.stream === true,
  input: messagesRequest,
  output: messagesResponse,
  handler: messages,
});
