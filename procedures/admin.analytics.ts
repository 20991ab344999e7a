import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { analytics } from '../src/services/operator/analytics.ts';

const count = z.number().int();
const day = z.string().describe('YYYY-MM-DD, UTC');

export default defineProcedure({
  name: 'admin.analytics',
  summary: 'Operator: the sign-up funnel, sign-ups and pageviews by day, top paths and referrers',
  description:
    "Over the last `days` whole UTC days, today included. funnel: pageviews (the public pages' cookieless beacon); " +
    'signups_requested: sign-ups that created an account (one to an address that already has one stores nothing and is not ' +
    'counted); keys_revealed: sign-up links opened (the API key shown); tenants_created: every tenant created, by sign-up ' +
    'or by an operator. Sign-ups and reveals of deleted accounts are gone with them. signups_by_day and pageviews_by_day ' +
    'list every day of the window, oldest first, days without any as 0; top_paths and top_referrers: the 20 most viewed ' +
    '(referrer null: none sent). No tenant, email address or IP is in the answer.',
  rest: { method: 'GET', path: '/v1/memory/admin/analytics', status: 200 },
  access: 'admin',
  input: z.object({ days: z.coerce.number().int().min(1).max(366).default(7).describe('1 to 366, default 7') }),
  output: z.object({
    days: count,
    funnel: z.object({ pageviews: count, signups_requested: count, keys_revealed: count, tenants_created: count }),
    signups_by_day: z.array(z.object({ day, signups: count })),
    pageviews_by_day: z.array(z.object({ day, views: count })),
    top_paths: z.array(z.object({ path: z.string(), views: count })),
    top_referrers: z.array(z.object({ referrer: z.string().nullable(), views: count })),
  }),
  handler: (ctx, input) => analytics(ctx.app, input.days),
});
