import { z } from 'zod';
import { timestamp } from '../src/schemas.ts';

/** Schemas of the access and account procedures. */
export const grantSchema = z
  .object({ agent_key_id: z.string(), label: z.string(), can_read: z.boolean(), can_write: z.boolean() })
  .openapi('Grant');

export const agentSchema = z
  .object({ id: z.string(), label: z.string(), read_only: z.boolean(), created_at: timestamp })
  .openapi('Agent');

export const linkSent = z.object({ detail: z.string() }).describe('Always the same answer: no account enumeration');

export const publicEmail = z.email().max(320).describe('The account email address');
