import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { promotionSchema } from '../src/schemas/promotion.ts';
import { getPromotion } from '../src/services/people/promotions.ts';
import { inPromotion, MISSING_PROMOTION, P1 } from './promotion-path.ts';

export default defineProcedure({
  name: 'promotions.get',
  summary: 'One promotion with its memories, to its proposer or a reviewer of its target',
  rest: { method: 'GET', path: P1, status: 200 },
  access: 'read',
  errors: { NOT_FOUND: MISSING_PROMOTION },
  mcp: { tool: 'get_promotion', title: 'Get a promotion', description: 'Read one proposal to promote memories: its memories, state, reviewer and reason.' },
  input: z.object(inPromotion),
  output: promotionSchema,
  handler: (ctx, input) => getPromotion(ctx, input.id),
});
