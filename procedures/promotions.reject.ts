import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { promotionSchema } from '../src/schemas/promotion.ts';
import { rejectPromotion } from '../src/services/people/promotions.ts';
import { DECIDED, inPromotion, MISSING_PROMOTION, NOT_REVIEWER, P1 } from './promotion-path.ts';

export default defineProcedure({
  name: 'promotions.reject',
  summary: 'Reject a promotion with a reason the proposer reads; nothing is copied',
  rest: { method: 'POST', path: `${P1}/reject`, status: 200 },
  access: 'write',
  errors: { FORBIDDEN: NOT_REVIEWER, NOT_FOUND: MISSING_PROMOTION, CONFLICT: DECIDED },
  mcp: {
    tool: 'reject_promotion',
    title: 'Reject a promotion',
    description: 'Reject a proposal to promote memories, with the reason. Only after the user agreed.',
  },
  input: z.object({ ...inPromotion, reason: z.string().trim().min(1).max(2000).describe('Why, for the proposer') }),
  output: promotionSchema,
  handler: (ctx, input) => rejectPromotion(ctx, input.id, input.reason),
});
