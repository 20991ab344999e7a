import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { seg } from '../api.ts';
import { MemoryFlagButtons } from './MemoryFlagButtons.tsx';
import { when } from './ui.tsx';

/** The first characters of a long text, cut at a word where possible. */
export function shortenMemoryText(text: string, max = 220): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** One memory of the list: its text, what it is, who made it, and (for writing keys) its pin and archive actions. */
export function MemoryListItem({ memory, canWrite, onChanged }: { memory: Memory; canWrite: boolean; onChanged: (m: Memory) => void }) {
  const href = `/collections/${seg(memory.collection)}/memories/${seg(memory.id)}`;
  return (
    <li className="card" data-memory-id={memory.id}>
      <p style={{ margin: '0 0 0.4rem' }}>
        <Link to={href}>{shortenMemoryText(memory.text)}</Link>
        {memory.pinned && <span className="badge">pinned</span>}
        {memory.archived && <span className="badge warn">archived</span>}
      </p>
      <p className="row muted" style={{ margin: 0, fontSize: '0.9rem', gap: '0.2rem 1rem' }}>
        <span>category {memory.category}</span>
        <span>importance {memory.importance}</span>
        {memory.container_tag && <span>tag {memory.container_tag}</span>}
        <span>by {memory.created_by.label ?? 'unknown'}</span>
        <span>
          <time dateTime={memory.created_at}>{when(memory.created_at)}</time>
        </span>
      </p>
      {canWrite && (
        <div style={{ marginTop: '0.5rem' }}>
          <MemoryFlagButtons memory={memory} onChanged={onChanged} />
        </div>
      )}
    </li>
  );
}
