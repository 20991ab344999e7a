import { z } from 'zod';
import { collectionName, timestamp } from './fields.ts';
import { oauthProviderNames, providerNames } from './providers/index.ts';

export const provider = z.enum(providerNames).describe('The source the connection reads');

export const oauthProvider = z.enum(oauthProviderNames).describe('A provider with an OAuth app');

export const containerTag = z.string().min(1).max(256).nullable().optional().describe('Scopes the synced memories');

export const connectionStatus = z.enum(['active', 'paused', 'error']);

export const connectionView = z.object({
  id: z.string(),
  provider,
  name: z.string().nullable(),
  collection: z.string(),
  container_tag: z.string().nullable(),
  config: z.record(z.string(), z.unknown()),
  status: connectionStatus.describe('active; error after a failed sync; paused after 5 failed syncs in a row (the scheduler skips it)'),
  last_error: z.string().nullable().describe("Why the last sync failed, in the provider's words"),
  cursor: z.string().nullable().describe('Position of the last synced record'),
  consecutive_failures: z.number().int(),
  last_sync_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type ConnectionView = z.infer<typeof connectionView>;

export const connectionCreate = z.object({
  provider,
  name: z.string().min(1).max(100).nullable().optional(),
  collection: collectionName,
  container_tag: containerTag,
  config: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("Provider-specific (see the README's connector tables); sync_interval_minutes (default 60) sets how often the scheduler syncs it"),
  credentials: z.record(z.string(), z.unknown()).default({}).describe('Provider-specific; encrypted at rest and never returned, logged, audited or exported'),
});
export type ConnectionCreate = z.infer<typeof connectionCreate>;

export const syncResult = z.object({
  synced: z.number().int().describe('Memories created or updated by this sync'),
  cursor: z.string().nullable(),
  status: connectionStatus,
  last_error: z.string().nullable(),
});

export const runView = z.object({
  id: z.string(),
  status: z.enum(['success', 'error']),
  synced_count: z.number().int(),
  error: z.string().nullable(),
  created_at: timestamp,
});

const jsonSchema = z.record(z.string(), z.unknown());

export const providerView = z.object({
  provider,
  label: z.string().describe('Its name for people'),
  synced: z.boolean().describe("The service syncs it; false: the connection is stored for the tenant's own job (postgres)"),
  oauth: z
    .enum(['available', 'not_configured', 'none'])
    .describe(
      'available: the OAuth start answers a consent URL; not_configured: the operator has not set its OAuth app (start answers 503); none: tokens only',
    ),
  credentials: jsonSchema.describe(
    'The `credentials` a connection takes, as JSON Schema (draft 2020-12): each field with its title and description; `format: password` marks a secret',
  ),
  config: jsonSchema.describe('The `config` a connection takes, as JSON Schema (draft 2020-12)'),
});
export type ProviderView = z.infer<typeof providerView>;
