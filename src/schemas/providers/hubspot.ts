import { z } from 'zod';
import { defineProvider, secretField, syncInterval } from './provider.ts';

export const hubspotProvider = defineProvider({
  name: 'hubspot',
  label: 'HubSpot',
  credentials: z.object({ token: secretField('Private-app token') }),
  config: z.object({ sync_interval_minutes: syncInterval }),
  sync: { by: 'service', api: { env: 'ORGMEM_HUBSPOT_API_URL', default: 'https://api.hubapi.com' } },
  oauth: null,
});
