import type { SyncedProvider } from '../../../schemas/providers/index.ts';
import { confluence } from './confluence.ts';
import type { Connector } from './connector.ts';
import { gdrive } from './gdrive.ts';
import { gmail } from './gmail.ts';
import { hubspot } from './hubspot.ts';
import { linear } from './linear.ts';
import { notion } from './notion.ts';
import { slack } from './slack.ts';

/**
 * How each provider the service syncs reads its records, by name. What the providers are is the
 * registry in src/schemas/providers/; the type asks here for one connector per provider whose
 * spec says the service syncs it (a tenant-run one, postgres, has none).
 */
export const connectors: Record<SyncedProvider, Connector> = { slack, notion, gdrive, gmail, linear, confluence, hubspot };
