import { useState, type FormEvent } from 'react';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc } from '../api.ts';
import { HOW, type How } from './RetractionHow.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/**
 * Retracts a memory (ended at a moment, or wrong) or undoes its retraction; for writing keys only
 * (the caller leaves it out for others). Nothing is deleted, so no confirmation is asked.
 */
export function MemoryRetract({ memory, onChanged }: { memory: Memory; onChanged: () => void }) {
  const [how, setHow] = useState<How>('ended');
  const [at, setAt] = useState('');
  const [reason, setReason] = useState('');
  const action = useAction();
  const target = { collection: memory.collection, id: memory.id };

  async function retract(e: FormEvent) {
    e.preventDefault();
    const input = {
      ...target,
      how,
      ...(how === 'ended' && at ? { at: new Date(at).toISOString() } : {}),
      ...(reason.trim() ? { reason: reason.trim() } : {}),
    };
    if (await action.run(() => rpc.memories.retract.mutate(input))) onChanged();
  }
  async function undo() {
    if (await action.run(() => rpc.memories.unretract.mutate(target))) onChanged();
  }

  return (
    <section aria-labelledby="retract-title">
      <h2 id="retract-title">Retraction</h2>
      {memory.retraction ? (
        <div className="row">
          <span className="muted">Retracted: search leaves it out{memory.retraction.how === 'ended' ? ' after it ended' : ' at every moment'}.</span>
          <button type="button" disabled={action.busy} onClick={() => void undo()}>
            Undo retraction
          </button>
        </div>
      ) : (
        <form onSubmit={retract} aria-label="Retract" className="card">
          <fieldset style={{ border: 0, padding: 0, margin: '0 0 0.6rem' }}>
            <legend className="muted">How</legend>
            {(Object.keys(HOW) as How[]).map((h) => (
              <span key={h} style={{ marginRight: '1rem' }}>
                <input id={`retract-${h}`} type="radio" name="how" checked={how === h} onChange={() => setHow(h)} />{' '}
                <label htmlFor={`retract-${h}`}>{HOW[h]}</label>
              </span>
            ))}
          </fieldset>
          {how === 'ended' && (
            <div className="field">
              <label htmlFor="retract-at">Ended at (optional, now when empty)</label>
              <input id="retract-at" type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} />
            </div>
          )}
          <div className="field">
            <label htmlFor="retract-reason">Reason (optional)</label>
            <input id="retract-reason" value={reason} maxLength={1000} onChange={(e) => setReason(e.target.value)} />
          </div>
          <button type="submit" className="danger" disabled={action.busy}>
            Retract
          </button>
        </form>
      )}
      {action.busy && <Busy label="Saving…" />}
      <ErrorNote error={action.error} />
    </section>
  );
}
