import { z } from 'zod';
import { defineProvider, secretField, syncInterval, type EnvUrl } from './provider.ts';

const api: EnvUrl = { env: 'ORGMEM_SLACK_API_URL', default: 'https://slack.com/api' };

export const slackProvider = defineProvider({
  name: 'slack',
  label: 'Slack',
  credentials: z.object({ token: secretField('Slack token', 'A bot or user token with channels:history (users:read for names)') }),
  config: z.object({ channel_id: z.string().min(1).meta({ title: 'Channel id', description: 'e.g. C0123456789' }), sync_interval_minutes: syncInterval }),
  sync: { by: 'service', api },
  oauth: {
    app: {
      name: 'Slack',
      clientId: 'ORGMEM_SLACK_CLIENT_ID',
      clientSecret: 'ORGMEM_SLACK_CLIENT_SECRET',
      authorize: { env: 'ORGMEM_SLACK_OAUTH_URL', default: 'https://slack.com', path: '/oauth/v2/authorize' },
      token: { ...api, path: '/oauth.v2.access' },
      exchange: 'form',
      renews: false,
    },
    // Read-only scopes: the connection only ever reads.
    params: { scope: 'channels:history,channels:read,groups:history,groups:read' },
  },
});
