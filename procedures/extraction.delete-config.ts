import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { deleteExtractionConfig } from '../src/services/llm/extraction-config.ts';

export default defineProcedure({
  name: 'extraction.deleteConfig',
  summary: 'Remove your extraction config: extraction goes back to the server override or the platform default',
  rest: { method: 'DELETE', path: '/v1/memory/extraction/config', status: 204 },
  access: 'write',
  keyRole: 'admin',
  input: z.object({}),
  output: noContent,
  handler: async (ctx) => {
    await deleteExtractionConfig(ctx);
    return null;
  },
});
