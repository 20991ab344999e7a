import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { promotionSchema, promotionState } from '../src/schemas/promotion.ts';
import { listPromotions } from '../src/services/people/promotions.ts';
import { P } from './promotion-path.ts';

export default defineProcedure({
  name: 'promotions.list',
  summary: 'The promotions you review and those you proposed, newest first',
  description: 'A reviewer sees what is proposed to the collections they review, a proposer their own proposals (docs/promotion.md).',
  rest: { method: 'GET', path: P, status: 200 },
  access: 'read',
  errors: { BAD_REQUEST: 'The cursor is not the `next` of a page this endpoint answered' },
  mcp: {
    tool: 'list_promotions',
    title: 'List promotions',
    description: 'List the proposals to promote memories that the user reviews or proposed, with their memories and state.',
  },
  input: z.object({
    state: promotionState.optional().describe('Only promotions in this state; every state when left out'),
    as: z.enum(['reviewer', 'proposer']).optional().describe('Only those you review, or only those you proposed; both when left out'),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(200).optional().describe('The `next` of the page before'),
  }),
  output: z.object({ promotions: z.array(promotionSchema), next: z.string().nullable().describe('The cursor of the next page; null on the last') }),
  handler: (ctx, input) => listPromotions(ctx, input),
});
