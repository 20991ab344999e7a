import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { extractionConfigView } from '../src/schemas/llm.ts';
import { getExtractionConfig } from '../src/services/llm/extraction-config.ts';

export default defineProcedure({
  name: 'extraction.getConfig',
  summary: "The tenant's own extraction LLM config (never its key) and which endpoint extraction uses now",
  rest: { method: 'GET', path: '/v1/memory/extraction/config', status: 200 },
  access: 'read',
  input: z.object({}),
  output: extractionConfigView,
  handler: (ctx) => getExtractionConfig(ctx),
});
