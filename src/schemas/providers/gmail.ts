import { z } from 'zod';
import { googleApp, googleConsent, googleRenewal } from './google.ts';
import { defineProvider, secretField, syncInterval } from './provider.ts';

export const gmailProvider = defineProvider({
  name: 'gmail',
  label: 'Gmail',
  credentials: z.object({ token: secretField('Access token', 'An OAuth access token with gmail.readonly'), ...googleRenewal }),
  config: z.object({
    // Gmail's own search syntax, as in the Gmail search box.
    query: z.string().min(1).optional().meta({ title: 'Gmail search', description: 'Gmail search syntax, e.g. label:support -category:promotions' }),
    sync_interval_minutes: syncInterval,
  }),
  sync: { by: 'service', api: { env: 'ORGMEM_GMAIL_API_URL', default: 'https://gmail.googleapis.com' } },
  oauth: { app: googleApp, params: googleConsent('https://www.googleapis.com/auth/gmail.readonly') },
});
