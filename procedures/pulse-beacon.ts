import { z } from 'zod';
import type { Procedure } from '../src/pipeline/procedure.ts';
import { noContent } from '../src/schemas/fields.ts';
import { recordPageview } from '../src/services/status/pageviews.ts';

// A beacon never fails: anything unusable becomes null (and the view is not recorded).
const text = (max: number) => z.string().max(max).nullable().optional().catch(null).openapi({ type: 'string', maxLength: max });

/** The cookieless beacon, shared by /v1/pulse and its legacy alias /v1/track. */
export function pulseProcedure(name: string, path: string): Procedure<z.ZodObject, typeof noContent, 'public', 'POST'> {
  return {
    name,
    summary: 'Cookieless pageview beacon: JSON or text/plain {path, referrer?}; stores no IP or cookie; always 204',
    rest: { method: 'POST', path, status: 204 },
    access: 'public',
    input: z.object({ path: text(2048), referrer: text(2048) }),
    output: noContent,
    handler: async (ctx, input: { path?: string | null; referrer?: string | null }) => {
      if (input.path) await recordPageview(ctx.app, input.path, input.referrer ?? null);
      return null;
    },
  };
}
