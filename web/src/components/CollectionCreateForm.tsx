import { useState } from 'react';
import { rpc } from '../api.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** collections.create: a new, empty collection (writing keys only; the caller leaves it out otherwise). */
export function CollectionCreateForm({ onCreated }: { onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const { busy, error, run } = useAction();
  return (
    <form
      aria-labelledby="new-collection-title"
      className="card"
      style={{ marginTop: '1.2rem' }}
      onSubmit={async (e) => {
        e.preventDefault();
        const body = { name: name.trim(), ...(description.trim() && { description: description.trim() }) };
        const made = await run(() => rpc.collections.create.mutate(body));
        if (!made) return;
        setName('');
        setDescription('');
        onCreated(made.name);
      }}
    >
      <h2 id="new-collection-title" style={{ marginTop: 0 }}>
        New collection
      </h2>
      <div className="row" style={{ alignItems: 'flex-start', gap: '0 1rem' }}>
        <div className="field" style={{ flex: '1 1 14rem' }}>
          <label htmlFor="collection-name">Name</label>
          <input
            id="collection-name"
            required
            maxLength={64}
            pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]{0,63}"
            title="1 to 64 characters of A-Z a-z 0-9 . _ - not starting with a dot"
            aria-describedby="collection-name-hint"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <span id="collection-name-hint" className="muted" style={{ fontSize: '0.85rem' }}>
            Letters, digits, dot, dash and underscore; not starting with a dot.
          </span>
        </div>
        <div className="field" style={{ flex: '3 1 20rem' }}>
          <label htmlFor="collection-description">Description (optional)</label>
          <input id="collection-description" maxLength={2000} value={description} onChange={(e) => setDescription(e.target.value)} />
        </div>
      </div>
      <button type="submit" className="primary" disabled={busy || !name.trim()}>
        Create collection
      </button>
      {busy && <Busy label="Creating…" />}
      <ErrorNote error={error} />
    </form>
  );
}
