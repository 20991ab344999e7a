import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { useSession } from '../session.tsx';
import { TrustBadge } from './TrustBadge.tsx';
import { QUARANTINE_NAMES, TRUST_NAMES } from './TrustNames.ts';
import { when } from './ui.tsx';

/**
 * Where the memory came from as a trust class, and, when its text was taken for an instruction to
 * an agent, its quarantine: the state, why, and who decided (docs/trust.md).
 */
export function MemoryTrust({ memory }: { memory: Memory }) {
  const { me } = useSession();
  const q = memory.quarantine;
  return (
    <section aria-labelledby="trust-title">
      <h2 id="trust-title">Trust</h2>
      <p data-testid="memory-trust">
        <TrustBadge trust={memory.trust} /> {TRUST_NAMES[memory.trust]}
      </p>
      {q && (
        <div className="card" data-testid="memory-quarantine" data-state={q.state}>
          <p style={{ marginTop: 0 }}>
            <span className={q.state === 'released' ? 'badge' : 'badge warn'} style={{ marginLeft: 0 }}>
              {q.state}
            </span>{' '}
            {QUARANTINE_NAMES[q.state]}{' '}
            <span className="muted">
              ({q.state === 'flagged' ? 'flagged' : 'held'} {when(q.at)})
            </span>
          </p>
          <ul aria-label="Why it was held" className="wrap">
            {q.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ul>
          {q.decided_by && (
            <p className="muted" style={{ marginBottom: 0 }}>
              {q.state} by {q.decided_by.label} on {when(q.decided_at)}
            </p>
          )}
          {q.state === 'held' && me?.key.role === 'admin' && (
            <p style={{ marginBottom: 0 }}>
              <Link to="/review#quarantine">Release or reject it on the Review page</Link>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
