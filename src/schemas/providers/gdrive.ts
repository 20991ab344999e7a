import { z } from 'zod';
import { googleApp, googleConsent, googleRenewal } from './google.ts';
import { defineProvider, secretField, syncInterval } from './provider.ts';

export const gdriveProvider = defineProvider({
  name: 'gdrive',
  label: 'Google Drive',
  credentials: z.object({ token: secretField('Access token', 'An OAuth access token'), ...googleRenewal }),
  config: z.object({
    // Quoted into the Drive query: Drive ids are letters, digits, - and _, so nothing can break out of the quotes.
    folder_id: z
      .string()
      .regex(/^[\w-]+$/, 'a Drive folder id (letters, digits, - and _)')
      .optional()
      .meta({ title: 'Folder id' }),
    // The user's own Drive query, combined in parentheses with the rest.
    query: z.string().min(1).optional().meta({ title: 'Drive query', description: "Drive query syntax, e.g. name contains 'plan'" }),
    sync_interval_minutes: syncInterval,
  }),
  sync: { by: 'service', api: { env: 'ORGMEM_GDRIVE_API_URL', default: 'https://www.googleapis.com' } },
  oauth: { app: googleApp, params: googleConsent('https://www.googleapis.com/auth/drive.readonly') },
});
