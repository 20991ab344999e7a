import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { seg } from '../api.ts';
import { when } from './ui.tsx';

/** The part of a memory (or a search result, which lacks the last three) a hygiene preview shows. */
type HygieneMemoryLike = Pick<Memory, 'id' | 'text' | 'category' | 'importance' | 'created_at'> & Partial<Pick<Memory, 'updated_at' | 'pinned' | 'archived'>>;

/** One memory in a preview: its text (a link to its page) and what decides its fate. */
export function HygieneMemoryLine({ collection, m, extra }: { collection: string; m: HygieneMemoryLike; extra?: string }) {
  return (
    <>
      <Link to={`/collections/${seg(collection)}/memories/${seg(m.id)}`} style={{ overflowWrap: 'anywhere' }}>
        {m.text}
      </Link>
      {m.pinned && <span className="badge">pinned</span>}
      {m.archived && <span className="badge warn">archived</span>}
      <div className="muted" style={{ fontSize: '0.85rem' }}>
        {extra ? `${extra} · ` : ''}
        {m.category} · importance {m.importance} · stored {when(m.created_at)}
        {m.updated_at && m.updated_at !== m.created_at ? ` · updated ${when(m.updated_at)}` : ''}
      </div>
    </>
  );
}

/** The hygiene section's result after a run, in words, announced to screen readers. */
export function HygieneDone({ children, texts = [] }: { children: ReactNode; /** The texts of the memories the run removed. */ texts?: string[] }) {
  return (
    <div className="card" role="status" style={{ marginTop: '0.6rem' }}>
      {children}
      {texts.length > 0 && (
        <ul>
          {texts.map((t, i) => (
            <li key={i}>{t}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
