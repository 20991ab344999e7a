import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { promotionSchema } from '../src/schemas/promotion.ts';
import { withdrawPromotion } from '../src/services/people/promotions.ts';
import { DECIDED, inPromotion, MISSING_PROMOTION, P1 } from './promotion-path.ts';

export default defineProcedure({
  name: 'promotions.withdraw',
  summary: 'Withdraw your own promotion while nobody has decided it',
  rest: { method: 'POST', path: `${P1}/withdraw`, status: 200 },
  access: 'write',
  errors: { FORBIDDEN: 'The caller did not propose it', NOT_FOUND: MISSING_PROMOTION, CONFLICT: DECIDED },
  mcp: { tool: 'withdraw_promotion', title: 'Withdraw a promotion', description: 'Withdraw a proposal the user made that nobody decided yet.' },
  input: z.object(inPromotion),
  output: promotionSchema,
  handler: (ctx, input) => withdrawPromotion(ctx, input.id),
});
