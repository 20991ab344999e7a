import { z } from 'zod';

/** `Q`: the tenant's quarantine (docs/trust.md, "Quarantine"), reviewed with admin keys. */
export const Q = '/v1/memory/quarantine';
export const inQuarantine = { id: z.string().describe('The held memory (UUID)') };
export const MISSING_HELD = 'No memory of this tenant with this id is in quarantine';
