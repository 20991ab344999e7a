import { z } from 'zod';
import { tierLimits } from '../core/config.ts';
import { timestamp } from './fields.ts';

/** Tenants, their API keys (agents) and collection grants (docs/access.md; docs/contract.md, "API keys"). */
export const tenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    tier: z.string(),
    limits: tierLimits.describe("The tier's limits, overridden per tenant where the operator set one"),
    is_admin: z.boolean(),
    created_at: timestamp,
  })
  .openapi('Tenant');
export type Tenant = z.infer<typeof tenantSchema>;

/**
 * What a key may change (docs/access.md, "Key roles"): an `admin` key also the tenant-wide settings
 * that route or expose data, an `agent` key only what its grants allow.
 */
export const keyRole = z.enum(['admin', 'agent']).describe("The key's role: admin keys also manage the tenant's keys, grants and settings");
export type KeyRole = z.infer<typeof keyRole>;

export const keySchema = z
  .object({
    id: z.string(),
    label: z.string(),
    role: keyRole,
    read_only: z.boolean(),
    person: z.boolean().describe('A key a person uses (the dashboard, their own scripts): what it writes is of trust class `user` (docs/trust.md)'),
    acts_for: z
      .string()
      .nullable()
      .describe('The person this key acts for (docs/people.md): it reads and writes at most what they may; null: a key of no person'),
    collections: z
      .array(z.string())
      .nullable()
      .describe('The only collections this key may touch (an MCP client approved through OAuth, docs/mcp.md), or null: every collection its grants allow'),
    prefix: z.string(),
    masked: z.string(),
    created_at: timestamp,
    last_used_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
  })
  .openapi('ApiKey');

export const agentSchema = z.object({ id: z.string(), label: z.string(), role: keyRole, read_only: z.boolean(), created_at: timestamp }).openapi('Agent');

export const GRANT_KINDS = ['key', 'person', 'team'] as const;

export const grantSchema = z
  .object({
    kind: z.enum(GRANT_KINDS).describe('Whom the grant names: an API key, a person or a team (docs/people.md)'),
    id: z.string().describe("The key's, person's or team's id"),
    agent_key_id: z.string().nullable().describe("The key's id for a key's grant; null for a person's or a team's"),
    label: z.string(),
    can_read: z.boolean(),
    can_write: z.boolean(),
  })
  .openapi('Grant');

export const linkSent = z.object({ detail: z.string() }).describe('Always the same answer: no account enumeration');

export const publicEmail = z.email().max(320).describe('The account email address');
