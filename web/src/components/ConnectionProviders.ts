/**
 * What each provider's connection needs (README "Connectors", api.md 4.10): the credential and
 * config fields the form asks for. The service checks them again (422 naming a missing field).
 */
export interface ConnectionField {
  name: string;
  label: string;
  required?: boolean;
  /** Tokens and passwords: typed into a password input, never shown back. */
  secret?: boolean;
  hint?: string;
}

export interface ConnectionProviderSpec {
  provider: 'slack' | 'notion' | 'gdrive' | 'gmail' | 'linear' | 'confluence' | 'hubspot' | 'postgres';
  label: string;
  /** The operator can configure an OAuth app for it (connections.oauth-start). */
  oauth: boolean;
  /** The service syncs it; a postgres connection is run by the tenant. */
  syncs: boolean;
  credentials: ConnectionField[];
  config: ConnectionField[];
  /** Credentials as free JSON (postgres keeps whatever the tenant gives). */
  freeCredentials?: boolean;
}

const refresh: ConnectionField[] = [
  { name: 'refresh_token', label: 'Refresh token', secret: true, hint: 'Optional: lets the service renew the access token' },
  { name: 'expires_at', label: 'Access token expires at', hint: 'Optional, ISO time, e.g. 2025-01-31T12:00:00Z' },
];

export const CONNECTION_PROVIDERS: ConnectionProviderSpec[] = [
  {
    provider: 'slack',
    label: 'Slack',
    oauth: true,
    syncs: true,
    credentials: [{ name: 'token', label: 'Slack token', required: true, secret: true, hint: 'A bot or user token with channels:history (users:read for names)' }],
    config: [{ name: 'channel_id', label: 'Channel id', required: true, hint: 'e.g. C0123456789' }],
  },
  {
    provider: 'notion',
    label: 'Notion',
    oauth: true,
    syncs: true,
    credentials: [{ name: 'token', label: 'Integration token', required: true, secret: true }],
    config: [{ name: 'database_id', label: 'Database id', hint: 'Optional: otherwise every page shared with the integration' }],
  },
  {
    provider: 'gdrive',
    label: 'Google Drive',
    oauth: true,
    syncs: true,
    credentials: [{ name: 'token', label: 'Access token', required: true, secret: true, hint: 'An OAuth access token' }, ...refresh],
    config: [
      { name: 'folder_id', label: 'Folder id', hint: 'Optional' },
      { name: 'query', label: 'Drive query', hint: "Optional, Drive query syntax, e.g. name contains 'plan'" },
    ],
  },
  {
    provider: 'gmail',
    label: 'Gmail',
    oauth: true,
    syncs: true,
    credentials: [{ name: 'token', label: 'Access token', required: true, secret: true, hint: 'An OAuth access token with gmail.readonly' }, ...refresh],
    config: [{ name: 'query', label: 'Gmail search', hint: 'Optional, e.g. label:support' }],
  },
  {
    provider: 'linear',
    label: 'Linear',
    oauth: false,
    syncs: true,
    credentials: [{ name: 'token', label: 'Linear API key', required: true, secret: true, hint: 'A personal API key (lin_api_…)' }],
    config: [],
  },
  {
    provider: 'confluence',
    label: 'Confluence',
    oauth: false,
    syncs: true,
    credentials: [
      { name: 'email', label: 'Atlassian email', required: true },
      { name: 'api_token', label: 'Atlassian API token', required: true, secret: true },
    ],
    config: [
      { name: 'base_url', label: 'Site URL', required: true, hint: 'https://acme.atlassian.net' },
      { name: 'space_key', label: 'Space key', hint: 'Optional' },
    ],
  },
  {
    provider: 'hubspot',
    label: 'HubSpot',
    oauth: false,
    syncs: true,
    credentials: [{ name: 'token', label: 'Private-app token', required: true, secret: true }],
    config: [],
  },
  {
    provider: 'postgres',
    label: 'PostgreSQL (run by you)',
    oauth: false,
    syncs: false,
    credentials: [],
    config: [],
    freeCredentials: true,
  },
];

export const connectionProvider = (provider: string) => CONNECTION_PROVIDERS.find((p) => p.provider === provider);
