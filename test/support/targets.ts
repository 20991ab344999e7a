import { targetRule } from '../../src/ports/public-target.ts';

/** The rule of default mode (every address) and of production mode (public addresses only), for tests calling ports directly. */
export const OPEN = targetRule({ targets: { publicOnly: false, allowedNetworks: [] } });
export const PUBLIC_ONLY = targetRule({ targets: { publicOnly: true, allowedNetworks: [] } });
