import { z } from 'zod';

/**
 * What a connector provider is, as data: everything but how it reads its records (that is
 * `pages`, in src/services/connectors/providers/). The config, the procedures, the OpenAPI
 * document and the dashboard are derived from these, through the registry in `index.ts`.
 */

/** A URL the operator may point elsewhere (a proxy, a fake in tests): the variable that sets it and the provider's own. */
export interface EnvUrl {
  env: `ORGMEM_${string}`;
  default: string;
}

/** An OAuth app the operator registers at a provider; one app may serve several providers (Google's: gdrive and gmail). */
export interface OAuthAppSpec {
  /** Names the app in messages. */
  name: string;
  clientId: `ORGMEM_${string}_CLIENT_ID`;
  clientSecret: `ORGMEM_${string}_CLIENT_SECRET`;
  /** The consent page: `path` under the URL the variable sets. */
  authorize: EnvUrl & { path: string };
  /** The token endpoint: `path` under the URL the variable sets. */
  token: EnvUrl & { path: string };
  /**
   * How the code is exchanged, as the provider documents it: a form carrying the client's id and
   * secret (Slack, Google), or JSON with the client in Basic auth (Notion).
   */
  exchange: 'form' | 'json-basic';
  /** Its access tokens expire: the refresh token renews one before a sync. */
  renews: boolean;
}

/**
 * Who reads the provider's records. The service: from `api`, a URL the operator may move or, for
 * a provider on the tenant's own site, the config field naming that site (an address the tenant
 * chooses, under the rule of every such address). The tenant: the service stores the connection
 * for the tenant's own job and never syncs it.
 */
export type ServiceSync = { by: 'service'; api: EnvUrl | { configField: string } };
export type SyncSpec = ServiceSync | { by: 'tenant' };

export interface ProviderSpec<Name extends string = string, Credentials = unknown, Config = unknown> {
  /** The API's name for it (`provider` in a connection). */
  name: Name;
  /** Its name for people. */
  label: string;
  /** Checked when a connection is made (a 422 naming the field); each field's title and description label the dashboard's form. */
  credentials: z.ZodType<Credentials>;
  config: z.ZodType<Config>;
  sync: SyncSpec;
  /** The app the consent flow uses and the authorize parameters this provider adds (its read-only scopes); null: no OAuth. */
  oauth: { app: OAuthAppSpec; params: Record<string, string> } | null;
}

/** Keeps the spec's literal types (its name, how it syncs, whether it has OAuth), from which the registry's types are derived. */
export function defineProvider<const S extends ProviderSpec>(spec: S): S {
  return spec;
}

/** A credential typed into a password box and never shown back. */
export const secretField = (title: string, description?: string) => z.string().min(1).meta({ title, description, format: 'password' });

/** Every synced provider's config takes it: the scheduler's interval. */
export const syncInterval = z.number().int().min(1).optional().meta({ title: 'Sync every (minutes)', description: '60 by default' });
