import { useState } from 'react';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc } from '../api.ts';
import { MEMORY_CATEGORIES } from './MemoryFilterForm.tsx';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** Metadata typed as JSON: an object, or the reason it is not one (blank means none). */
export function parseMemoryMetadata(text: string): { value: Record<string, unknown> | undefined; error: string | null } {
  if (!text.trim()) return { value: undefined, error: null };
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value))
      return { value: undefined, error: 'Metadata must be a JSON object, like {"topic": "billing"}' };
    return { value: value as Record<string, unknown>, error: null };
  } catch (err) {
    return { value: undefined, error: `Metadata is not valid JSON: ${(err as Error).message}` };
  }
}

/** memories.create: one memory stored as typed (searchable as soon as it is added). */
export function MemoryAddForm({ collection, onAdded }: { collection: string; onAdded: (m: Memory) => void }) {
  const [text, setText] = useState('');
  const [importance, setImportance] = useState('0.5');
  const [category, setCategory] = useState('');
  const [tag, setTag] = useState('');
  const [metadata, setMetadata] = useState('');
  const [added, setAdded] = useState<Memory | null>(null);
  const { busy, error, run } = useAction();
  const meta = parseMemoryMetadata(metadata);

  const submit = async () => {
    setAdded(null);
    const body = {
      text,
      importance: Number(importance),
      ...(category.trim() && { category: category.trim() }),
      ...(tag.trim() && { container_tag: tag.trim() }),
      ...(meta.value && { metadata: meta.value }),
    };
    const memory = await run(() => rpc.memories.create.mutate({ collection, ...body }));
    if (!memory) return;
    setText('');
    setMetadata('');
    setAdded(memory);
    onAdded(memory);
  };

  return (
    // Folded by default: the page is mostly for reading; the summary is a real, focusable disclosure control.
    <details className="card" style={{ marginBottom: '0.8rem' }}>
      <summary style={{ cursor: 'pointer', fontWeight: 600 }}>Add memory</summary>
      <form
        aria-label="Add memory"
        style={{ marginTop: '0.6rem' }}
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="field">
          <label htmlFor="add-text">Text</label>
          <textarea id="add-text" required maxLength={10_000} value={text} onChange={(e) => setText(e.target.value)} />
        </div>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <div className="field">
            <label htmlFor="add-importance">Importance</label>
            <input id="add-importance" type="number" min={0} max={1} step={0.05} required value={importance} onChange={(e) => setImportance(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="add-category">Category</label>
            <input
              id="add-category"
              list="add-categories"
              placeholder="other"
              pattern="[a-z0-9_\-]{1,64}"
              title="a lowercase slug: a-z 0-9 _ -"
              value={category}
              onChange={(e) => setCategory(e.target.value)}
            />
            <datalist id="add-categories">
              {MEMORY_CATEGORIES.map((c) => (
                <option key={c} value={c} />
              ))}
            </datalist>
          </div>
          <div className="field">
            <label htmlFor="add-tag">Container tag</label>
            <input id="add-tag" placeholder="none" maxLength={256} value={tag} onChange={(e) => setTag(e.target.value)} />
          </div>
        </div>
        <div className="field">
          <label htmlFor="add-metadata">Metadata (JSON object, optional)</label>
          <textarea
            id="add-metadata"
            style={{ minHeight: '3.5rem', fontFamily: 'monospace' }}
            placeholder='{"topic": "billing"}'
            value={metadata}
            aria-invalid={!!meta.error}
            aria-describedby={meta.error ? 'add-metadata-error' : undefined}
            onChange={(e) => setMetadata(e.target.value)}
          />
          {meta.error && (
            <p id="add-metadata-error" className="error" role="alert">
              {meta.error}
            </p>
          )}
        </div>
        <button type="submit" className="primary" disabled={busy || !!meta.error || !text.trim()}>
          Add memory
        </button>
        {busy && <Busy label="Adding (embedding the text)…" />}
        <ErrorNote error={error} />
        {added && (
          <p className="ok" role="status">
            Added.
          </p>
        )}
      </form>
    </details>
  );
}
