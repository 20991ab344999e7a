import { Link } from 'react-router';
import { rpc, seg } from '../api.ts';
import { shortenMemoryText } from './MemoryListItem.tsx';
import { Busy, ErrorNote } from './ui.tsx';
import { useApi } from './use-api.ts';

/** A memory named inside a sentence or a list: its text, shortened. */
export function MemoryRefText({ text }: { text: string }) {
  return <>{shortenMemoryText(text, 140)}</>;
}

/** memories.related: the nearest memories by embedding, with their similarity. */
export function MemoryRelated({ collection, id }: { collection: string; id: string }) {
  const related = useApi(() => rpc.memories.related.query({ collection, id, limit: 5 }), [collection, id]);
  const results = related.data?.results ?? [];
  return (
    <section aria-labelledby="related-title">
      <h2 id="related-title">Related memories</h2>
      <ErrorNote error={related.error} />
      {related.loading && <Busy label="Finding related memories…" />}
      {related.data && results.length === 0 && <p className="muted">No related memories (archived, superseded and expired ones are left out).</p>}
      {results.length > 0 && (
        <ul aria-label="Related memories">
          {results.map((r) => (
            <li key={r.id}>
              <Link to={`/collections/${seg(collection)}/memories/${seg(r.id)}`}>
                <MemoryRefText text={r.text} />
              </Link>{' '}
              <span className="muted">
                score {r.score.toFixed(2)} · {r.category}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
