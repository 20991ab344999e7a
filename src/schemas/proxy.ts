import { z } from 'zod';
import { collectionName, tokenBudget } from './fields.ts';

/**
 * The chat proxy's request and answer (docs/llm-calls.md, "The chat proxy"): OpenAI's chat completion
 * shapes, read only as far as the proxy needs them. Both are loose objects: every field the proxy
 * does not name (tools, response_format, seed, user...) goes to the endpoint as it is, and every
 * field of the endpoint's answer comes back as it is.
 */

const contentPart = z.looseObject({ type: z.string().min(1) }).describe('A content part, e.g. {type: "text", text} or {type: "image_url", image_url}');

export const proxyMessage = z
  .looseObject({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z
      .union([z.string(), z.array(contentPart), z.null()])
      .optional()
      .describe('Text, or an array of content parts'),
  })
  .describe('An OpenAI chat message; its other fields (name, tool_calls, tool_call_id...) are forwarded as they are');
export type ProxyMessage = z.infer<typeof proxyMessage>;

/** orgmem's own fields of every proxy request (docs/proxy.md, "Fields"), beside the API's. */
/** A thread budget in tokens (docs/proxy.md, "Long threads"). */
const threadTokens = z.number().int().min(256).max(10_000_000);

export const memoryFields = {
  collection: collectionName.optional().describe('Recall from (and store into) this collection only; default: recall from every collection the key may read'),
  container_tag: z
    .string()
    .min(1)
    .max(256)
    .nullable()
    .default(null)
    .describe('Recall only memories with this container tag (e.g. an end-user id); a stored message gets it too'),
  memory_limit: z
    .number()
    .int()
    .min(0)
    .max(50)
    .default(5)
    .describe('Memories recalled for the message, 0 to 50, besides the stable profile and pinned ones (0: no memory at all)'),
  memory_tokens: tokenBudget.default(1000).describe('Most tokens of the memory system message, counted with o200k_base (128 to 32000)'),
  store: z.boolean().default(true).describe('Queue the latest user message for remember (fact extraction). A read-only key must send false'),
  max_thread_tokens: threadTokens
    .optional()
    .describe(
      "Trim the conversation to this many tokens (o200k_base) by dropping its oldest turns whole, keeping the system prompt and the latest turn; default: the tenant's (PUT /v1/memory/proxy/config), else no trimming",
    ),
};

export const proxyConfig = z
  .object({
    max_thread_tokens: threadTokens
      .nullable()
      .describe("The thread budget of a proxy request that sets none (a request's own max_thread_tokens overrides it); null: threads forwarded whole"),
  })
  .openapi('ProxyConfig');

const proxyFields = {
  messages: z.array(proxyMessage).min(1).max(1000).describe('The conversation, as for OpenAI (1 to 1000 messages)'),
  model: z.string().min(1).max(256).optional().describe('The model; default: the model configured for the endpoint'),
  ...memoryFields,
  temperature: z.number().min(0).max(2).optional().describe('Sampling temperature, 0 to 2'),
  max_tokens: z.number().int().min(1).optional().describe('Most tokens to generate'),
  stream: z
    .boolean()
    .optional()
    .describe('true: the answer is server-sent chat.completion.chunk events ending with data: [DONE], memvault in X-Memvault-* headers'),
};

export const proxyRequest = z.looseObject(proxyFields);

/**
 * The largest request body a proxy route reads, in bytes: agents send whole histories (tool
 * results, files, images inline) with every turn (docs/proxy.md, "Limits").
 */
export const PROXY_BODY_LIMIT = 32 * 1024 * 1024;
export type ProxyRequest = z.output<typeof proxyRequest>;

const memoryUsed = z.object({
  id: z.string(),
  text: z.string(),
  score: z.number().nullable().describe('The search score, 0 to 1; null for a memory of the stable part (profile and pinned)'),
  collection: z.string(),
});

export const memvault = z
  .object({
    memories_used: z.array(memoryUsed).describe('The memories handed to the model in the order of the block: the stable part, then the most relevant first'),
    stored: z.boolean().describe('Whether the latest user message was queued for remember'),
    turns_dropped: z.number().int().describe('The oldest turns of the conversation dropped to fit max_thread_tokens (0: none)'),
    memory_error: z
      .string()
      .nullable()
      .describe("What of orgmem's own part failed (recall, storing), the chat having gone on without it; null when nothing did"),
  })
  .describe("What the proxy added (the name is the service's former short name)");

/** What an endpoint must answer for the proxy to pass it on: a chat completion. */
export const chatCompletion = z.looseObject({
  id: z.string().optional(),
  object: z.string().optional().describe('"chat.completion"'),
  created: z.number().optional(),
  model: z.string().optional(),
  choices: z.array(
    z.looseObject({
      index: z.number().int().optional(),
      message: z.looseObject({ role: z.string(), content: z.string().nullable().optional() }),
      finish_reason: z.string().nullable().optional(),
    }),
  ),
  usage: z.looseObject({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number().optional() }).optional(),
});

export const proxyResponse = chatCompletion
  .extend({ memvault })
  .describe("The endpoint's chat completion as it answered it, plus memvault")
  .openapi('ChatCompletionWithMemory');
