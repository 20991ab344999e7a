import { z } from 'zod';
import { defineProvider, secretField, syncInterval, type EnvUrl } from './provider.ts';

const api: EnvUrl = { env: 'ORGMEM_NOTION_API_URL', default: 'https://api.notion.com' };

export const notionProvider = defineProvider({
  name: 'notion',
  label: 'Notion',
  credentials: z.object({ token: secretField('Integration token') }),
  config: z.object({
    database_id: z.string().min(1).optional().meta({ title: 'Database id', description: 'Otherwise every page shared with the integration' }),
    sync_interval_minutes: syncInterval,
  }),
  sync: { by: 'service', api },
  oauth: {
    app: {
      name: 'Notion',
      clientId: 'ORGMEM_NOTION_CLIENT_ID',
      clientSecret: 'ORGMEM_NOTION_CLIENT_SECRET',
      authorize: { ...api, path: '/v1/oauth/authorize' },
      token: { ...api, path: '/v1/oauth/token' },
      exchange: 'json-basic',
      renews: false,
    },
    params: { response_type: 'code', owner: 'user' },
  },
});
