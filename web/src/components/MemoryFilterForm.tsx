import { useState } from 'react';
import { MEMORY_PAGE_SIZES, type MemoryListFilters } from './MemoryListQuery.ts';

/** Categories the service itself writes; any other lowercase slug can be typed. */
export const MEMORY_CATEGORIES = ['fact', 'preference', 'episode', 'other', 'document', 'email', 'connector'];

/** The memory list's filters; applied together with one button so a typed word is not a request per key. */
export function MemoryFilterForm({ filters, onApply }: { filters: MemoryListFilters; onApply: (f: MemoryListFilters) => void }) {
  const [draft, setDraft] = useState(filters);
  const set = <K extends keyof MemoryListFilters>(k: K, v: MemoryListFilters[K]) => setDraft((d) => ({ ...d, [k]: v }));
  return (
    <form
      aria-label="Filter memories"
      className="row"
      style={{ alignItems: 'flex-end', marginBottom: '0.8rem' }}
      onSubmit={(e) => {
        e.preventDefault();
        onApply({ ...draft, category: draft.category.trim(), tag: draft.tag.trim(), offset: 0 });
      }}
    >
      <div className="field">
        <label htmlFor="filter-category">Category</label>
        <input
          id="filter-category"
          list="memory-categories"
          value={draft.category}
          placeholder="any"
          size={12}
          onChange={(e) => set('category', e.target.value)}
        />
        <datalist id="memory-categories">
          {MEMORY_CATEGORIES.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
      </div>
      <div className="field">
        <label htmlFor="filter-tag">Container tag</label>
        <input id="filter-tag" value={draft.tag} placeholder="any" size={12} onChange={(e) => set('tag', e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="filter-pinned">Pinned</label>
        <select id="filter-pinned" value={draft.pinned} onChange={(e) => set('pinned', e.target.value as MemoryListFilters['pinned'])}>
          <option value="any">any</option>
          <option value="yes">pinned only</option>
          <option value="no">not pinned</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-archived">Archived</label>
        <select id="filter-archived" value={draft.archived} onChange={(e) => set('archived', e.target.value as MemoryListFilters['archived'])}>
          <option value="hide">hide</option>
          <option value="include">include</option>
          <option value="only">archived only</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-limit">Per page</label>
        <select id="filter-limit" value={draft.limit} onChange={(e) => set('limit', Number(e.target.value))}>
          {MEMORY_PAGE_SIZES.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <div className="row">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              const cleared: MemoryListFilters = { category: '', tag: '', pinned: 'any', archived: 'hide', limit: draft.limit, offset: 0 };
              setDraft(cleared);
              onApply(cleared);
            }}
          >
            Clear
          </button>
        </div>
      </div>
    </form>
  );
}
