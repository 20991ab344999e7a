import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc, seg } from '../api.ts';
import { MemoryRefText } from './MemoryRelated.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/** The report answers at most this many pairs, newest first. */
const REPORT_LIMIT = 1000;

/**
 * The facts this memory replaced and the fact that replaced it. A memory carries no supersession
 * fields of its own: the collection's contradictions report has them, filtered here to this memory.
 */
export function MemorySupersession({ collection, id }: { collection: string; id: string }) {
  // Each pair: `current` replaced `superseded` at `superseded_at`.
  const report = useApi(() => rpc.graph.contradictions.query({ collection, limit: REPORT_LIMIT }), [collection, id]);
  const pairs = report.data ?? [];
  const replacedBy = pairs.filter((p) => p.superseded.id === id);
  const replaced = pairs.filter((p) => p.current.id === id);
  const link = (m: Memory) => `/collections/${seg(collection)}/memories/${seg(m.id)}`;
  return (
    <section aria-labelledby="supersession-title">
      <h2 id="supersession-title">Supersession history</h2>
      <ErrorNote error={report.error} />
      {report.loading && <Busy label="Loading supersession history…" />}
      {report.data && (
        <>
          {replacedBy.length > 0 ? (
            replacedBy.map((p) => (
              <p key={p.current.id} className="card" style={{ borderColor: '#f1c27d' }}>
                <span className="badge warn">superseded</span> This fact was replaced on <time dateTime={p.superseded_at}>{when(p.superseded_at)}</time> by{' '}
                <Link to={link(p.current)}>
                  <MemoryRefText text={p.current.text} />
                </Link>
                . It no longer appears in search.
              </p>
            ))
          ) : (
            <p className="muted">Nothing has superseded this memory.</p>
          )}
          {replaced.length > 0 ? (
            <>
              <h3 style={{ fontSize: '1rem' }}>Facts it superseded</h3>
              <ul>
                {replaced.map((p) => (
                  <li key={p.superseded.id}>
                    <Link to={link(p.superseded)}>
                      <MemoryRefText text={p.superseded.text} />
                    </Link>{' '}
                    <span className="muted">
                      (stored {when(p.superseded.created_at)}, superseded <time dateTime={p.superseded_at}>{when(p.superseded_at)}</time>)
                    </span>
                  </li>
                ))}
              </ul>
            </>
          ) : (
            <p className="muted">It superseded no other fact.</p>
          )}
          {pairs.length >= REPORT_LIMIT && <p className="muted">Only the newest {REPORT_LIMIT} supersessions of the collection were checked.</p>}
        </>
      )}
    </section>
  );
}
