import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc } from '../api.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/**
 * "Propose to…" on a memory of a personal collection (docs/promotion.md): the team or org
 * collection it should go to, and a note for its reviewers. Shown for a personal collection only;
 * the service refuses anyone but its owner.
 */
export function MemoryPropose({ memory }: { memory: Memory }) {
  const collections = useApi(() => rpc.collections.list.query(), []);
  const [opened, setOpened] = useState(false);
  const [to, setTo] = useState('');
  const [note, setNote] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction();
  const from = collections.data?.find((c) => c.name === memory.collection);
  if (from?.scope !== 'personal') return null;
  const targets = (collections.data ?? []).filter((c) => c.scope !== 'personal');

  async function propose(e: FormEvent) {
    e.preventDefault();
    const input = { memory_ids: [memory.id], from_collection: memory.collection, to_collection: to, ...(note.trim() ? { note: note.trim() } : {}) };
    const p = await action.run(() => rpc.promotions.propose.mutate(input));
    if (p) {
      setSent(p.to_collection);
      setOpened(false);
    }
  }

  return (
    <section aria-labelledby="propose-title">
      <h2 id="propose-title">Promotion</h2>
      {sent && (
        <p className="ok" role="status">
          Proposed to {sent}: it waits for its reviewers (<Link to="/review#promotions">Review</Link>).
        </p>
      )}
      {!opened ? (
        <button type="button" onClick={() => setOpened(true)}>
          Propose to…
        </button>
      ) : (
        <form onSubmit={propose} aria-label="Propose to a collection" className="card">
          <div className="field">
            <label htmlFor="propose-to">Collection</label>
            <select id="propose-to" value={to} required onChange={(e) => setTo(e.target.value)}>
              <option value="">Pick a team or org collection</option>
              {targets.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name} ({c.scope})
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="propose-note">Note for the reviewers (optional)</label>
            <input id="propose-note" value={note} maxLength={2000} onChange={(e) => setNote(e.target.value)} />
          </div>
          <div className="row">
            <button type="submit" disabled={action.busy || !to}>
              Propose
            </button>
            <button type="button" onClick={() => setOpened(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {action.busy && <Busy label="Proposing…" />}
      <ErrorNote error={action.error} />
    </section>
  );
}
