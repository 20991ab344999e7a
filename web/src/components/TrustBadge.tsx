import { TRUST_NAMES } from './TrustNames.ts';

/**
 * Where a memory came from (docs/trust.md), as a badge with its meaning on hover. A string, not
 * only a TrustClass: a ledger entry names its memories' classes as plain strings.
 */
export function TrustBadge({ trust }: { trust: string }) {
  const meaning = (TRUST_NAMES as Record<string, string | undefined>)[trust];
  return (
    <span className="badge" data-testid="trust" title={meaning ? `Trust class ${trust}: ${meaning}` : `Trust class ${trust}`}>
      {trust}
    </span>
  );
}

/** A memory the tenant's policy flags instead of holding: it is served, and marked so. */
export function FlaggedBadge() {
  return (
    <span className="badge warn" data-testid="flagged" title="Its text was taken for an instruction to an agent; the policy serves it, marked">
      flagged
    </span>
  );
}
