import type { Connector, Provider } from './connector.ts';
import { confluence } from './confluence.ts';
import { gdrive } from './gdrive.ts';
import { gmail } from './gmail.ts';
import { hubspot } from './hubspot.ts';
import { linear } from './linear.ts';
import { notion } from './notion.ts';
import { postgres } from './postgres.ts';
import { slack } from './slack.ts';

/** Every provider by name; the connection's credentials and config are checked against its schemas at create. */
export const connectors: Record<Provider, Connector<unknown, unknown>> = { slack, notion, gdrive, gmail, linear, confluence, hubspot, postgres } as Record<
  Provider,
  Connector<unknown, unknown>
>;
