import { useState } from 'react';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc } from '../api.ts';
import { MEMORY_CATEGORIES } from './MemoryFilterForm.tsx';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** memories.update with only the fields that changed (the API refuses an empty patch; a new text is re-embedded). */
export function MemoryEditForm({ memory, onSaved }: { memory: Memory; onSaved: (m: Memory) => void }) {
  const [text, setText] = useState(memory.text);
  const [importance, setImportance] = useState(String(memory.importance));
  const [category, setCategory] = useState(memory.category);
  const { busy, error, run } = useAction();
  const patch = {
    ...(text !== memory.text && { text }),
    ...(Number(importance) !== memory.importance && { importance: Number(importance) }),
    ...(category.trim() !== memory.category && { category: category.trim() }),
  };
  const changed = Object.keys(patch).length > 0;
  return (
    <form
      aria-labelledby="edit-memory-title"
      className="card"
      onSubmit={async (e) => {
        e.preventDefault();
        const saved = await run(() => rpc.memories.update.mutate({ collection: memory.collection, id: memory.id, ...patch }));
        if (saved) onSaved(saved);
      }}
    >
      <h2 id="edit-memory-title" style={{ marginTop: 0 }}>
        Edit
      </h2>
      <div className="field">
        <label htmlFor="edit-text">Text</label>
        <textarea id="edit-text" required maxLength={10_000} value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <div className="row" style={{ alignItems: 'flex-start' }}>
        <div className="field">
          <label htmlFor="edit-importance">Importance</label>
          <input id="edit-importance" type="number" min={0} max={1} step={0.05} required value={importance} onChange={(e) => setImportance(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="edit-category">Category</label>
          <input
            id="edit-category"
            list="edit-categories"
            required
            pattern="[a-z0-9_\-]{1,64}"
            title="a lowercase slug: a-z 0-9 _ -"
            value={category}
            onChange={(e) => setCategory(e.target.value)}
          />
          <datalist id="edit-categories">
            {MEMORY_CATEGORIES.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
        </div>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={busy || !changed || !text.trim()}>
          Save changes
        </button>
        {changed && (
          <button
            type="button"
            onClick={() => {
              setText(memory.text);
              setImportance(String(memory.importance));
              setCategory(memory.category);
            }}
          >
            Discard
          </button>
        )}
      </div>
      {busy && <Busy label="Saving…" />}
      <ErrorNote error={error} />
    </form>
  );
}
