import { confluenceProvider } from './confluence.ts';
import { gdriveProvider } from './gdrive.ts';
import { gmailProvider } from './gmail.ts';
import { hubspotProvider } from './hubspot.ts';
import { linearProvider } from './linear.ts';
import { notionProvider } from './notion.ts';
import { postgresProvider } from './postgres.ts';
import type { EnvUrl, OAuthAppSpec, ProviderSpec } from './provider.ts';
import { slackProvider } from './slack.ts';

/**
 * The connector providers, once: a new provider is its file here (what it is, as data), its
 * `pages` in src/services/connectors/providers/ (how it reads, which the compiler then asks for),
 * and one line below. The API's enums, the configuration, the procedures' texts, the OpenAPI
 * document and the dashboard's form are derived from this list (docs/architecture.md).
 */
export const providers = [
  slackProvider,
  notionProvider,
  gdriveProvider,
  gmailProvider,
  linearProvider,
  confluenceProvider,
  hubspotProvider,
  postgresProvider,
] as const;

type Spec = (typeof providers)[number];
export type Provider = Spec['name'];
/** Those the service syncs. */
export type SyncedProvider = Extract<Spec, { sync: { by: 'service' } }>['name'];
/** Those with an OAuth consent flow. */
export type OAuthProvider = Extract<Spec, { oauth: object }>['name'];

export const providerNames = providers.map((p) => p.name);
export const oauthProviderNames = providers.flatMap((p) => (p.oauth ? [p.name as OAuthProvider] : []));

export const providerSpec = (name: Provider): ProviderSpec => providers.find((p) => p.name === name)!;

/** The OAuth apps, each once (gdrive and gmail share Google's). */
export const oauthApps: OAuthAppSpec[] = [...new Set(providers.flatMap((p) => (p.oauth ? [p.oauth.app] : [])))];

/** Every URL variable the providers and their OAuth apps read, each once with its default. */
export const connectorUrls: EnvUrl[] = (() => {
  const all = [
    ...providers.flatMap((p) => (p.sync.by === 'service' && 'env' in p.sync.api ? [p.sync.api] : [])),
    ...oauthApps.flatMap((a) => [a.authorize, a.token]),
  ];
  const byEnv = new Map<string, EnvUrl>();
  for (const { env, default: url } of all) {
    // Slack's token endpoint is under its API base: one variable, so one default.
    if (byEnv.has(env) && byEnv.get(env)!.default !== url) throw new Error(`${env} has two defaults: ${byEnv.get(env)!.default} and ${url}`);
    byEnv.set(env, { env, default: url });
  }
  return [...byEnv.values()];
})();
