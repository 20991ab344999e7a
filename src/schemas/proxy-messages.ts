import { z } from 'zod';
import { memoryFields, memvault } from './proxy.ts';

/**
 * The Messages proxy's request and answer (docs/proxy.md, "Anthropic Messages"): Anthropic's
 * shapes, read only as far as the proxy needs them. Loose objects throughout: content blocks the
 * proxy does not name (tool use and results, images, documents, thinking and its signature...)
 * and every other field go to the upstream exactly as they came.
 */

const block = z.looseObject({ type: z.string().min(1).max(64) }).describe('A content block, e.g. {type: "text", text}, tool_use, image, document, thinking');

export const anthropicMessage = z
  .looseObject({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), z.array(block)]).describe('Text, or an array of content blocks'),
  })
  .describe('An Anthropic message; its blocks are forwarded as they are');
export type AnthropicMessage = z.infer<typeof anthropicMessage>;

export const messagesRequest = z.looseObject({
  model: z.string().min(1).max(256).describe('The model, as the upstream names it'),
  messages: z.array(anthropicMessage).min(1).max(10_000).describe('The conversation (1 to 10,000 messages)'),
  max_tokens: z.number().int().min(1).describe('Most tokens to generate'),
  system: z
    .union([z.string(), z.array(block)])
    .optional()
    .describe('The system prompt: text, or text blocks (with their cache_control)'),
  tools: z.array(z.looseObject({})).optional().describe('Tools the model may call, forwarded as they are'),
  stream: z.boolean().optional().describe("true: the answer is the upstream's server-sent events, relayed as they come"),
  ...memoryFields,
  anthropic_version: z.string().max(64).optional().describe('The anthropic-version header, sent on (default 2023-06-01)'),
  anthropic_beta: z.string().max(1024).optional().describe('The anthropic-beta header, sent on as it came'),
});
export type MessagesRequest = z.output<typeof messagesRequest>;

export const anthropicAnswer = z
  .looseObject({
    id: z.string().optional(),
    type: z.literal('message'),
    role: z.string().optional(),
    content: z.array(block),
    model: z.string().optional(),
    stop_reason: z.string().nullable().optional(),
    usage: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).optional(),
  })
  .describe('An Anthropic message as the upstream answered it');

export const messagesResponse = anthropicAnswer
  .extend({ memvault })
  .describe("The upstream's message as it answered it, plus memvault (for stream: true, server-sent events and X-Memvault-* headers)")
  .openapi('AnthropicMessageWithMemory');

export const countTokensRequest = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(anthropicMessage).min(1).max(10_000),
  anthropic_version: z.string().max(64).optional().describe('The anthropic-version header, sent on (default 2023-06-01)'),
  anthropic_beta: z.string().max(1024).optional().describe('The anthropic-beta header, sent on as it came'),
});

export const countTokensResponse = z
  .looseObject({ input_tokens: z.number() })
  .describe("The upstream's count, as it answered it")
  .openapi('AnthropicTokenCount');
