import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { seg } from '../api.ts';
import { TrustBadge } from './TrustBadge.tsx';
import { ConfirmButton, when } from './ui.tsx';

/**
 * One memory of the quarantine: where it was written and by whom, its text (as text: it is
 * exactly what the screen distrusted), why it was held, and who decided on it. `decide` is there
 * for a writable admin key while it is held.
 */
export function QuarantineItem({ memory: m, decide, busy }: { memory: Memory; decide?: (how: 'release' | 'reject') => void; busy: boolean }) {
  const q = m.quarantine!;
  const title = `held-${m.id}`;
  return (
    <article aria-labelledby={title} data-state={q.state} className="card">
      <p className="row muted" style={{ margin: 0, fontSize: '0.85rem', gap: '0.2rem 0.8rem' }}>
        <Link to={`/collections/${seg(m.collection)}`}>{m.collection}</Link>
        <span>
          trust <TrustBadge trust={m.trust} />
        </span>
        <span>by {m.created_by.label ?? 'unknown'}</span>
        <time dateTime={m.created_at}>{when(m.created_at)}</time>
      </p>
      <p id={title} className="wrap" style={{ margin: '0.5rem 0', whiteSpace: 'pre-wrap' }}>
        {m.text}
      </p>
      <ul aria-label="Why it was held" className="wrap" style={{ margin: '0 0 0.4rem', paddingLeft: '1.2rem' }}>
        {q.reasons.map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ul>
      {q.decided_by && (
        <p className="muted" style={{ margin: '0 0 0.4rem', fontSize: '0.85rem' }}>
          {q.state} by {q.decided_by.label} on {when(q.decided_at)}
        </p>
      )}
      <div className="row">
        {decide && (
          <>
            <button type="button" onClick={() => decide('release')} disabled={busy}>
              Release
            </button>
            <ConfirmButton label="Reject" title="Reject this memory?" confirmLabel="Reject memory" onConfirm={() => decide('reject')} disabled={busy}>
              <p>The memory is archived and stays held: no agent is served it, and the decision is not taken back.</p>
            </ConfirmButton>
          </>
        )}
        <Link to={`/collections/${seg(m.collection)}/memories/${seg(m.id)}`}>Open the memory</Link>
      </div>
    </article>
  );
}
