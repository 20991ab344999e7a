import type { PolicyAction, Quarantine, TrustClass } from '../../../src/schemas/trust.ts';

/**
 * The words for docs/trust.md's lists, keyed by the API's own types: a class, action or state the
 * service adds fails the dashboard's type check until it is named here (web/ may import only types
 * from src/schemas/, so the lists below are read from these keys).
 */
export const TRUST_NAMES: Record<TrustClass, string> = {
  user: "written with a person's key",
  agent: 'written by an agent key or an MCP client',
  tool: 'captured from a conversation (hooks, chat proxies)',
  document: 'read from an upload, a drop or a folder',
  mail: 'received by mail',
  connector: 'synced by a connection',
  import: 'imported from another store',
};
export const POLICY_CLASSES = Object.keys(TRUST_NAMES) as TrustClass[];

export const POLICY_NAMES: Record<PolicyAction, string> = {
  quarantine: 'hold in quarantine',
  flag: 'flag, and serve it',
  off: 'not checked',
};
export const POLICY_CHOICES = Object.keys(POLICY_NAMES) as PolicyAction[];

export type QuarantineState = Quarantine['state'];
export const QUARANTINE_NAMES: Record<QuarantineState, string> = {
  held: 'held: served to no agent until an admin decides',
  released: 'released: served again after review',
  rejected: 'rejected: archived and served to nobody',
  flagged: 'flagged: served, marked as possibly instructing an agent',
};
export const QUARANTINE_VIEWS = Object.keys(QUARANTINE_NAMES) as QuarantineState[];
