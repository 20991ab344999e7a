import type { SyncedProvider } from '../../../src/schemas/providers/index.ts';
import type { ProviderFake } from './base.ts';
import { startConfluenceFake } from './confluence.ts';
import { startGdriveFake } from './gdrive.ts';
import { startGmailFake } from './gmail.ts';
import { startHubspotFake } from './hubspot.ts';
import { startLinearFake } from './linear.ts';
import { startNotionFake } from './notion.ts';
import { startSlackFake } from './slack.ts';

/**
 * A fake of each provider the service syncs, by name: the type asks for one per synced provider
 * of the registry (src/schemas/providers/), and the end-to-end tests and the sync bench run them all.
 */
export const providerFakes: Record<SyncedProvider, (opts?: { pageSize?: number }) => Promise<ProviderFake>> = {
  slack: startSlackFake,
  notion: startNotionFake,
  gdrive: startGdriveFake,
  gmail: startGmailFake,
  linear: startLinearFake,
  confluence: startConfluenceFake,
  hubspot: startHubspotFake,
};
