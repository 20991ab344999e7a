import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import type { Promotion } from '../../../src/schemas/promotion.ts';
import { seg } from '../api.ts';
import { when } from './ui.tsx';

/** What a reviewer or the proposer may do with a promotion still proposed; absent: only read it. */
export interface PromotionActions {
  accept?: () => void;
  reject?: (reason: string) => void;
  withdraw?: () => void;
  busy: boolean;
}

/**
 * One promotion (docs/promotion.md): from which personal collection to which shared one, who
 * proposed it and why, its memories' texts (as text), and its decision. A reviewer accepts or
 * rejects with a reason; the proposer withdraws.
 */
export function PromotionItem({ promotion: p, actions }: { promotion: Promotion; actions: PromotionActions }) {
  const [reason, setReason] = useState('');
  const title = `promotion-${p.id}`;
  const open = p.state === 'proposed';
  const reject = (e: FormEvent) => {
    e.preventDefault();
    actions.reject?.(reason.trim());
  };
  return (
    <article aria-labelledby={title} data-state={p.state} className="card">
      <p id={title} className="row wrap" style={{ margin: 0, gap: '0.2rem 0.8rem' }}>
        <span>
          {p.from_collection} → <Link to={`/collections/${seg(p.to_collection)}`}>{p.to_collection}</Link>
        </span>
        <span className={p.state === 'rejected' ? 'badge warn' : 'badge'}>{p.state}</span>
      </p>
      <p className="muted wrap" style={{ margin: '0.3rem 0', fontSize: '0.85rem' }}>
        Proposed by {p.proposed_by.label}
        {p.proposed_by_agent && ` (through ${p.proposed_by_agent.label})`} on <time dateTime={p.created_at}>{when(p.created_at)}</time>
      </p>
      {p.note && (
        <p className="wrap" style={{ margin: '0.3rem 0' }}>
          “{p.note}”
        </p>
      )}
      <ul aria-label="Proposed memories" className="wrap" style={{ margin: '0.4rem 0', paddingLeft: '1.2rem', whiteSpace: 'pre-wrap' }}>
        {p.memories.map((m) => (
          <li key={m.id}>{m.text}</li>
        ))}
      </ul>
      {p.memories.length < p.memory_ids.length && (
        <p className="muted" style={{ fontSize: '0.85rem' }}>
          {p.memory_ids.length - p.memories.length} of its memories were deleted or held since.
        </p>
      )}
      {p.decided_at && (
        <p className="muted wrap" style={{ margin: '0 0 0.4rem', fontSize: '0.85rem' }}>
          {p.state} by {p.decided_by?.label ?? p.decided_by_agent?.label} on {when(p.decided_at)}
          {p.reason && `: “${p.reason}”`}
        </p>
      )}
      {open && (actions.accept || actions.withdraw) && (
        <div className="row">
          {actions.accept && (
            <button type="button" onClick={actions.accept} disabled={actions.busy}>
              Accept
            </button>
          )}
          {actions.withdraw && (
            <button type="button" onClick={actions.withdraw} disabled={actions.busy}>
              Withdraw
            </button>
          )}
        </div>
      )}
      {open && actions.reject && (
        <form aria-label="Reject the promotion" onSubmit={reject} className="row" style={{ marginTop: '0.5rem', alignItems: 'flex-end' }}>
          <div className="field" style={{ flex: '1 1 14rem', margin: 0 }}>
            <label htmlFor={`${title}-reason`}>Reason to reject</label>
            <input id={`${title}-reason`} value={reason} maxLength={2000} required onChange={(e) => setReason(e.target.value)} />
          </div>
          <button type="submit" className="danger" disabled={actions.busy || !reason.trim()}>
            Reject
          </button>
        </form>
      )}
    </article>
  );
}
