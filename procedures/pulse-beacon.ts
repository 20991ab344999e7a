import { z } from 'zod';
import type { Procedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { enforce, hit } from '../src/services/access/rate-limit.ts';
import { recordPageview } from '../src/services/status/pageviews.ts';

// A beacon never fails: anything unusable becomes null (and the view is not recorded).
const text = (max: number) => z.string().max(max).nullable().optional().catch(null).openapi({ type: 'string', maxLength: max });

/** The cookieless beacon, shared by /v1/pulse and its legacy alias /v1/track. */
export function pulseProcedure(name: string, path: string): Procedure<z.ZodObject, typeof noContent, 'public', 'POST'> {
  return {
    name,
    summary: 'Cookieless pageview beacon: JSON or text/plain {path, referrer?}; stores no IP or cookie; 204 whatever it is sent',
    description: 'A client address past its budget of beacons (ORGMEM_PULSE_PER_IP a window) gets 429 with Retry-After, and nothing is stored.',
    rest: { method: 'POST', path, status: 204 },
    access: 'public',
    errors: { TOO_MANY_REQUESTS: 'Over the budget of beacons of the client address (Retry-After in seconds)' },
    input: z.object({ path: text(2048), referrer: text(2048) }),
    output: noContent,
    handler: async (ctx, input: { path?: string | null; referrer?: string | null }) => {
      // Every beacon counts, recorded or not: the budget bounds what one address can make the server do.
      const { perIp, windowSeconds } = ctx.app.config.pulseLimit;
      enforce(null, perIp, await hit(ctx.app, ctx.app.platform, `pulse:${ctx.ip ?? 'unknown'}`, windowSeconds), 'client address');
      if (input.path) await recordPageview(ctx.app, input.path, input.referrer ?? null);
      return null;
    },
  };
}
