import { z } from 'zod';
import { defineProvider, secretField, syncInterval } from './provider.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export const confluenceProvider = defineProvider({
  name: 'confluence',
  label: 'Confluence',
  credentials: z.object({ email: z.string().min(1).meta({ title: 'Atlassian email' }), api_token: secretField('Atlassian API token') }),
  config: z.object({
    // The API token travels as Basic auth on every request, so only https (or a loopback address,
    // where a local stand-in such as a test double listens) may receive it.
    base_url: z
      .url()
      .refine((u) => {
        // Refinements run even when the URL check failed: a string that is no URL fails here too.
        const url = URL.canParse(u) ? new URL(u) : null;
        return url?.protocol === 'https:' || (url?.protocol === 'http:' && LOOPBACK.has(url.hostname));
      }, 'must be an https URL such as https://acme.atlassian.net')
      // The site is the base: a pasted `/wiki` or trailing slash would double the API path.
      .transform((u) => u.replace(/\/+$/, '').replace(/\/wiki$/, ''))
      .meta({ title: 'Site URL', description: 'e.g. https://acme.atlassian.net' }),
    // Quotes and backslashes would break out of the CQL string the key is put in.
    space_key: z
      .string()
      .regex(/^[^"\\]+$/, 'a space key has no quotes or backslashes')
      .optional()
      .meta({ title: 'Space key' }),
    sync_interval_minutes: syncInterval,
  }),
  // Each tenant's own Atlassian site.
  sync: { by: 'service', api: { configField: 'base_url' } },
  oauth: null,
});
