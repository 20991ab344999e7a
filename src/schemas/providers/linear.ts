import { z } from 'zod';
import { defineProvider, secretField, syncInterval } from './provider.ts';

export const linearProvider = defineProvider({
  name: 'linear',
  label: 'Linear',
  credentials: z.object({ token: secretField('Linear API key', 'A personal API key (lin_api_…)') }),
  config: z.object({ sync_interval_minutes: syncInterval }),
  sync: { by: 'service', api: { env: 'ORGMEM_LINEAR_API_URL', default: 'https://api.linear.app' } },
  oauth: null,
});
