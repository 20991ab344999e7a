import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { promotionSchema } from '../src/schemas/promotion.ts';
import { acceptPromotion } from '../src/services/people/promotion-accept.ts';
import { DECIDED, inPromotion, MISSING_PROMOTION, NOT_REVIEWER, P1 } from './promotion-path.ts';

export default defineProcedure({
  name: 'promotions.accept',
  summary: 'Accept a promotion: its memories are copied into the target, with where they came from',
  description:
    'Each copy keeps its text, times and trust class and names its source in `metadata.promoted_from`; all of them are written in one ' +
    'transaction, or none (docs/promotion.md, "Accepting").',
  rest: { method: 'POST', path: `${P1}/accept`, status: 200 },
  access: 'write',
  errors: {
    FORBIDDEN: `${NOT_REVIEWER}, or the target's grants do not let the caller write it`,
    NOT_FOUND: MISSING_PROMOTION,
    CONFLICT: `${DECIDED}, or a memory was deleted or held since it was proposed`,
  },
  mcp: {
    tool: 'accept_promotion',
    title: 'Accept a promotion',
    description: 'Accept a proposal to promote memories: they are copied into the team or org collection. Only after the user agreed.',
  },
  input: z.object(inPromotion),
  output: promotionSchema,
  handler: (ctx, input) => acceptPromotion(ctx, input.id),
});
