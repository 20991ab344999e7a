import { defineProcedure } from '../src/pipeline/procedure.ts';
import { promotionInput, promotionSchema } from '../src/schemas/promotion.ts';
import { proposePromotion } from '../src/services/people/promotions.ts';
import { P } from './promotion-path.ts';

export default defineProcedure({
  name: 'promotions.propose',
  summary: 'Propose memories of your personal collection to a team or org collection, for its reviewers to accept or reject',
  description:
    "A person (or their agent) proposes; an admin of the target's teams (a team collection) or of the tenant (an org collection) " +
    'accepts, copying the memories there, or rejects with a reason (docs/promotion.md).',
  rest: { method: 'POST', path: P, status: 201 },
  access: 'write',
  collection: { field: 'from_collection', permission: 'read' },
  errors: {
    BAD_REQUEST: 'The key acts for no person, the source is not personal, the target is personal, or a memory is held in quarantine',
    FORBIDDEN: 'The source is personal to someone else',
    NOT_FOUND: 'A collection, or a memory in the source, does not exist',
  },
  mcp: {
    tool: 'propose_promotion',
    title: 'Propose memories to a shared collection',
    description: "Propose memories of the user's personal collection to a team or org collection; its reviewers accept or reject. Only after the user agreed.",
  },
  input: promotionInput,
  output: promotionSchema,
  handler: (ctx, input) => proposePromotion(ctx, input),
});
