import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { extractionConfigView } from '../src/schemas/llm.ts';
import { putExtractionConfig } from '../src/services/llm/extraction-config.ts';

export default defineProcedure({
  name: 'extraction.putConfig',
  summary: 'Use your own OpenAI-compatible endpoint for extraction (saved only if a live self-test passes)',
  description:
    'Runs one completion with max_tokens 1 against the endpoint first; if it fails the answer is 400 with the reason ' +
    'and nothing is saved. The key is stored encrypted and never returned. Calls to your own endpoint never count ' +
    'against the spend cap.',
  rest: { method: 'PUT', path: '/v1/memory/extraction/config', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: 'The endpoint failed its self-test, or (production mode) it is a private or loopback address' },
  input: z.object({
    provider: z.literal('custom').default('custom'),
    base_url: z.url({ protocol: /^https?$/ }).describe('Base URL of the API, e.g. https://api.openai.com/v1 (…/chat/completions is appended)'),
    model: z.string().min(1).max(200),
    api_key: z.string().max(1000).nullable().optional().describe('Sent as a bearer token; omit for endpoints without keys'),
  }),
  output: extractionConfigView,
  handler: (ctx, input) => putExtractionConfig(ctx, input),
});
