import { z } from 'zod';
import { timestamp } from './fields.ts';

/**
 * Where a memory came from, derived by the server from how it was written, never claimed by the
 * client (docs/trust.md, "Trust classes"): a person, an agent, automatic capture of a
 * conversation, or one of the pipelines that read outside text.
 */
export const TRUST_CLASSES = ['user', 'agent', 'tool', 'document', 'mail', 'connector', 'import'] as const;
export type TrustClass = (typeof TRUST_CLASSES)[number];
export const trustClass = z
  .enum(TRUST_CLASSES)
  .describe(
    "user: a person (a key marked as a person's); agent: an agent key or OAuth client; tool: captured automatically from a conversation (hooks, proxies); document, mail, connector, import: from those pipelines",
  );

/** Only memories of these trust classes, in search and the context endpoint (docs/trust.md). */
export const trustFilter = z
  .array(trustClass)
  .min(1)
  .max(TRUST_CLASSES.length)
  .nullable()
  .default(null)
  .describe('Only memories of these trust classes (docs/trust.md), e.g. ["user", "document"]; every class when left out');

/** What happens to a memory whose text tries to instruct an agent, per trust class (docs/trust.md, "Quarantine"). */
export const POLICY_ACTIONS = ['quarantine', 'flag', 'off'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** The default: every class but a person's own words is held. */
export const DEFAULT_POLICY: Record<TrustClass, PolicyAction> = {
  user: 'off',
  agent: 'quarantine',
  tool: 'quarantine',
  document: 'quarantine',
  mail: 'quarantine',
  connector: 'quarantine',
  import: 'quarantine',
};

export const trustPolicy = z
  .object(Object.fromEntries(TRUST_CLASSES.map((c) => [c, z.enum(POLICY_ACTIONS)])) as Record<TrustClass, z.ZodEnum<{ [A in PolicyAction]: A }>>)
  .describe('Per trust class: quarantine (held, never served until released), flag (served, marked), off (not checked)')
  .openapi('TrustPolicy');
export type TrustPolicy = z.infer<typeof trustPolicy>;
export const trustPolicyPatch = trustPolicy.partial().describe('The classes to change; the others keep their action');

/**
 * A memory's quarantine state: `held` (stored, served to nobody), `released` and `rejected` (an
 * admin's decision; rejected stays archived and held), `flagged` (served, marked in the recall).
 */
export const QUARANTINE_STATES = ['held', 'released', 'rejected', 'flagged'] as const;
export const quarantineState = z.enum(QUARANTINE_STATES);
export const quarantineSchema = z
  .object({
    state: quarantineState,
    reasons: z.array(z.string()).describe('Why the text was taken for an instruction to an agent'),
    at: timestamp.describe('When it was held or flagged'),
    decided_by: z.object({ id: z.string().nullable(), label: z.string() }).nullable().describe('The admin key that released or rejected it'),
    decided_at: timestamp.nullable(),
  })
  .openapi('Quarantine');
export type Quarantine = z.infer<typeof quarantineSchema>;

/** Where memories were handed to an agent (docs/trust.md, "The influence ledger"). */
export const FRONT_ENDS = ['rest', 'trpc', 'mcp', 'proxy', 'hook'] as const;
export type FrontEnd = (typeof FRONT_ENDS)[number];

/** A memory as a ledger entry shows it: the text it had when it was handed over, and what it is now. */
const ledgerMemory = z.object({
  id: z.string(),
  collection: z.string().nullable().describe('Null once the memory is deleted'),
  text: z.string().nullable().describe('The text as it was handed over (an edit since does not change it); null once deleted'),
  now: z
    .enum(['current', 'superseded', 'retracted', 'expired', 'archived', 'held', 'deleted'])
    .describe('What the memory is now: an entry still names a superseded, retracted or quarantined memory'),
  trust: trustClass.nullable().describe('Null once deleted'),
});

export const ledgerEntry = z
  .object({
    id: z.string(),
    at: timestamp,
    agent: z.object({ id: z.string().nullable(), label: z.string() }),
    via: z.enum(FRONT_ENDS),
    procedure: z.string().describe('The operation that handed the memories over, e.g. search.all, context.all, proxy.chatCompletions'),
    request_id: z.string(),
    session_id: z.string().nullable().describe('The hook session, MCP session or proxy conversation, where the caller said'),
    memories: z.array(ledgerMemory),
  })
  .openapi('LedgerEntry');
export type LedgerEntry = z.infer<typeof ledgerEntry>;

export const ledgerPage = z
  .object({
    entries: z.array(ledgerEntry),
    next: z.string().nullable().describe('The cursor of the next page; null on the last'),
    dropped: z.number().int().describe('Entries this tenant lost in all (a full queue, or a database refusing them a minute): a gap is counted, never silent'),
    last_dropped_at: timestamp.nullable(),
  })
  .openapi('LedgerPage');

export const memoryRecipientsSchema = z
  .object({
    memory_id: z.string(),
    agents: z.array(
      z.object({
        agent: z.object({ id: z.string().nullable(), label: z.string() }),
        times: z.number().int().describe('Ledger entries that handed it to this identity'),
        first_at: timestamp,
        last_at: timestamp,
        via: z.array(z.enum(FRONT_ENDS)),
      }),
    ),
  })
  .openapi('MemoryRecipients');
