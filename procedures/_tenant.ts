import { z } from 'zod';
import { timestamp } from '../src/schemas.ts';

export const tenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    tier: z.string(),
    limits: z.object({
      rate_limit_per_minute: z.number().int(),
      max_memories: z.number().int().nullable(),
      max_collections: z.number().int().nullable(),
      max_storage_bytes: z.number().int().nullable(),
    }),
    is_admin: z.boolean(),
    created_at: timestamp,
  })
  .openapi('Tenant');

export const keySchema = z
  .object({
    id: z.string(),
    label: z.string(),
    read_only: z.boolean(),
    prefix: z.string(),
    masked: z.string(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
  })
  .openapi('ApiKey');
