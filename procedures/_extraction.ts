import { z } from 'zod';
import { timestamp } from '../src/schemas.ts';

export const extractionConfigView = z
  .object({
    configured: z.boolean().describe('Whether the tenant has its own config'),
    provider: z.literal('custom').nullable(),
    base_url: z.string().nullable(),
    model: z.string().nullable(),
    api_key_set: z.boolean().describe('The key itself is never returned'),
    created_at: timestamp.nullable(),
    updated_at: timestamp.nullable(),
    source: z.enum(['tenant', 'server', 'platform', 'none']).describe('The endpoint extraction uses now: the tenant\'s, the server override, the platform default, or none (heuristics)'),
  })
  .openapi('ExtractionConfig');
