import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { embedTexts } from '../src/services/embed/embed.ts';

export default defineProcedure({
  name: 'internal.embed',
  summary: "Internal: embed texts with the server's embedder (X-Internal-Secret)",
  description:
    "For the operator's own processes, not for clients: no API key, the shared secret ORGMEM_INTERNAL_SECRET in " +
    'X-Internal-Secret (unset: always 401). One vector per text, in order, from the embedder the stored memories use: ' +
    '`model` is its description, `dimensions` the length of every vector.',
  rest: { method: 'POST', path: '/v1/memory/_internal/embed', status: 200 },
  access: 'internal',
  secret: { header: 'X-Internal-Secret', value: (config) => config.internalSecret },
  input: z.object({ texts: z.array(z.string().min(1).max(10_000)).min(1).max(256).describe('1 to 256 texts of 1 to 10000 characters') }),
  output: z.object({ model: z.string(), dimensions: z.number().int(), embeddings: z.array(z.array(z.number())) }),
  handler: (ctx, input) => embedTexts(ctx.app, input.texts),
});
