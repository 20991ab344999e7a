import { z } from 'zod';
import { secretField, type OAuthAppSpec } from './provider.ts';

/** Google's OAuth app, shared by gdrive and gmail: one client id and secret for both. */
export const googleApp: OAuthAppSpec = {
  name: 'Google',
  clientId: 'ORGMEM_GOOGLE_CLIENT_ID',
  clientSecret: 'ORGMEM_GOOGLE_CLIENT_SECRET',
  authorize: { env: 'ORGMEM_GOOGLE_OAUTH_URL', default: 'https://accounts.google.com', path: '/o/oauth2/v2/auth' },
  token: { env: 'ORGMEM_GOOGLE_TOKEN_URL', default: 'https://oauth2.googleapis.com/token', path: '' },
  exchange: 'form',
  renews: true,
};

/** The consent for one read-only scope; offline access with a fresh consent, so that Google answers a refresh token. */
export const googleConsent = (scope: string) => ({ response_type: 'code', scope, access_type: 'offline', prompt: 'consent' });

/** Google access tokens last an hour: with these the sync renews one (src/services/connectors/oauth.ts). */
export const googleRenewal = {
  refresh_token: secretField('Refresh token', 'Lets the service renew the access token').optional(),
  expires_at: z.iso.datetime({ offset: true }).optional().meta({ title: 'Access token expires at', description: 'ISO time, e.g. 2025-01-31T12:00:00Z' }),
};
