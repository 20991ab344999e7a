import { defineProcedure } from '../src/pipeline/procedure.ts';
import { proxyRequest, proxyResponse } from '../src/schemas/proxy.ts';
import { chatCompletions } from '../src/services/proxy/chat-completions.ts';
import { storeCollection } from '../src/services/proxy/turn.ts';

export default defineProcedure({
  name: 'proxy.chatCompletions',
  summary: 'OpenAI-compatible chat completion with automatic memory, whole or streamed',
  description:
    'Point an OpenAI client at base URL /v1/proxy with an orgmem API key as its key. The latest user message is searched ' +
    'in the memories the key may read (one collection, or all of them); up to memory_limit results go to the model as a ' +
    'system message before the conversation, marked as recalled data rather than instructions. The request is forwarded ' +
    "to the tenant's LLM endpoint (its extraction config, else the server's, else the platform default) with every other " +
    'OpenAI field (tools, response_format, seed...) as sent and `model` defaulting to the configured one; it is tried once, ' +
    "so the client's own retries apply. The answer is the endpoint's chat completion as it came, plus memvault; with stream: true, " +
    "the endpoint's chat.completion.chunk events relayed as they come (the usage chunk when stream_options.include_usage asks for it) " +
    'and data: [DONE], memvault in the X-Memvault-Memories and X-Memvault-Stored headers. With store ' +
    "(the default) the latest user message is then queued for remember with the model's reply (a stream: at its end; a broken one: " +
    'the message alone) in the collection (else "default"), with the ' +
    'container tag, when it ends the conversation (a call ending with a tool result stores nothing again); a read-only ' +
    'key must send store: false. When recall or storing fails, the chat goes on without it and memvault.memory_error (or the ' +
    'X-Memvault-Memory-Error header) says so. Usage counts toward the spend cap. Error bodies also carry ' +
    "OpenAI's error object (message, type, param, code), which OpenAI clients raise as their own errors.",
  rest: { method: 'POST', path: '/v1/proxy/chat/completions', status: 200 },
  access: 'write',
  frontEnd: 'proxy',
  // Recall reads the named collection; storing writes it (else the default one).
  collection: [
    { collections: (input) => (input.store ? [storeCollection(input)] : []), permission: 'write' },
    { field: 'collection', permission: 'read' },
  ],
  readWhen: (input) => !input.store,
  // The usage record of the LLM call commits on its own, before the message is stored: the call was
  // made (and counts toward the spend cap) even if storing then fails.
  commits: 'in-steps',
  errors: {
    FORBIDDEN: 'store is true and the key may not write the collection the message goes to (the named one, else "default")',
    TOO_MANY_REQUESTS: "The monthly LLM spend cap is reached (the operator's endpoints are withheld until the month turns)",
    BAD_GATEWAY: 'The LLM endpoint failed or refused the request (its status and message are in detail), or did not answer with a chat completion',
    SERVICE_UNAVAILABLE: 'No LLM endpoint is configured: no extraction config of the tenant, no server or platform default',
    GATEWAY_TIMEOUT: 'The LLM endpoint did not answer within the timeout (ORGMEM_LLM_TIMEOUT_MS)',
  },
  streams: (input) => input.stream === true,
  input: proxyRequest,
  output: proxyResponse,
  handler: chatCompletions,
});
