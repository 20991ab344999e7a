import { z } from 'zod';

/** `P`: the promotions of the tenant (docs/promotion.md); `P1`: one of them. */
export const P = '/v1/memory/promotions';
export const P1 = `${P}/{id}`;
export const inPromotion = { id: z.string().max(64).describe('The promotion id (UUID)') };
export const MISSING_PROMOTION = 'No promotion of this tenant with this id that the caller proposed or reviews';
export const NOT_REVIEWER = 'The caller does not review the target: an admin of its teams (a team collection) or of the tenant (an org collection)';
export const DECIDED = 'The promotion was accepted, rejected or withdrawn already';
