import type { ChangeKind } from '../../../src/schemas/consolidation.ts';
import type { Change } from '../../../src/schemas/consolidation.ts';
import { ReviewMemory } from './ReviewMemory.tsx';
import { ErrorNote, when } from './ui.tsx';

/** A kind of change in words: "fix validity". */
export const reviewKind = (kind: ChangeKind) => kind.replace('_', ' ');

/** What a change does to the memories it names in `memory_ids` (the one in `keep_id` is kept); keyed by the API's own kinds. */
const FATE: Record<ChangeKind, string> = {
  merge: 'replaced',
  supersede: 'replaced',
  archive: 'archived',
  fix_validity: 'validity corrected',
};

/** Every kind of change, in the API's order: the compiler holds FATE to the API's list. */
export const REVIEW_KINDS = Object.keys(FATE) as ChangeKind[];

/**
 * One change: what it is, why, and its evidence side by side (the memories it touches, the kept
 * one marked), a checkbox while it waits for review, and Undo once applied (both for admin keys
 * only: the caller leaves them out otherwise).
 */
export function ReviewChange(props: {
  collection: string;
  change: Change;
  selected?: { on: boolean; set(on: boolean): void };
  onUndo?: () => void;
  busy: boolean;
}) {
  const { change: c, selected } = props;
  const { evidence, proposal } = c;
  const title = `change-${c.id}`;
  return (
    <article aria-labelledby={title} data-state={c.state} className="card">
      <div className="row">
        {selected && (
          <label className="check">
            <input type="checkbox" checked={selected.on} onChange={(e) => selected.set(e.target.checked)} />
            Select
          </label>
        )}
        <h3 id={title} style={{ margin: 0, fontSize: '1rem' }}>
          {reviewKind(c.kind)} <span className={c.state === 'failed' ? 'badge warn' : 'badge'}>{c.state}</span>
        </h3>
      </div>
      <p className="wrap" style={{ margin: '0.4rem 0' }}>
        {evidence.reason}
      </p>
      <p className="muted" style={{ margin: '0.4rem 0', fontSize: '0.85rem' }}>
        Proposed by {evidence.proposed_by === 'llm' ? 'the LLM' : 'the rules'}
        {evidence.similarity !== null && ` · similarity ${evidence.similarity.toFixed(3)}`}
        {proposal.valid_to && ` · valid to ${when(proposal.valid_to)}`}
        {c.applied_at && ` · applied ${when(c.applied_at)}`}
        {c.undone_at && ` · undone ${when(c.undone_at)}`}
      </p>
      {c.state === 'failed' && <ErrorNote error={c.detail} />}
      <div className="grid" aria-label="Evidence" role="group">
        {evidence.memories.map((m) => (
          <ReviewMemory
            key={m.id}
            collection={props.collection}
            m={m}
            fate={m.id === proposal.keep_id ? 'kept' : proposal.memory_ids.includes(m.id) ? FATE[c.kind] : 'for reference'}
          />
        ))}
      </div>
      {props.onUndo && (
        <button type="button" onClick={props.onUndo} disabled={props.busy} style={{ marginTop: '0.6rem' }}>
          Undo
        </button>
      )}
    </article>
  );
}
