import { z } from 'zod';
import { memoryFields, memvault } from './proxy.ts';

/**
 * The Responses proxy's request and answer (docs/proxy.md, "OpenAI Responses"): OpenAI's shapes,
 * read only as far as the proxy needs them; every other field and item goes on as it came.
 */
const item = z.looseObject({}).describe('An input item: a message {role, content}, a function call output, a reasoning item...');

export const responsesRequest = z.looseObject({
  model: z.string().min(1).max(256).optional().describe('The model; default: the model configured for the endpoint'),
  input: z
    .union([z.string(), z.array(item).max(10_000)])
    .describe('The new input: text, or items (with previous_response_id, only the items after that response)'),
  instructions: z.string().nullable().optional().describe('The system instructions, sent on as they are'),
  previous_response_id: z.string().min(1).max(256).nullable().optional().describe('The response this one continues; its thread is recalled from too'),
  stream: z.boolean().optional().describe('true: the answer is the semantic server-sent events (response.created ... response.completed)'),
  ...memoryFields,
});
export type ResponsesRequest = z.output<typeof responsesRequest>;

export const responseObject = z
  .looseObject({
    id: z.string().min(1),
    object: z.literal('response'),
    output: z.array(z.looseObject({})),
    usage: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).nullable().optional(),
  })
  .describe('A response as the endpoint answered it');

export const responsesResponse = responseObject
  .extend({ memvault })
  .describe("The endpoint's response as it answered it, plus memvault (for stream: true, server-sent events and X-Memvault-* headers)")
  .openapi('ResponseWithMemory');
