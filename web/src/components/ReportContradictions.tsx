import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc, seg } from '../api.ts';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/** How many pairs the page asks for (the service allows up to 1000). */
const LIMIT = 100;

/** A memory in a report: its text linking to its page, its category and when it was stored. */
export function ReportMemoryLink({ m }: { m: Memory }) {
  return (
    <>
      <Link to={`/collections/${seg(m.collection)}/memories/${seg(m.id)}`}>{m.text}</Link>
      <div className="muted" style={{ fontSize: '0.85rem' }}>
        {m.category} · stored {when(m.created_at)}
      </div>
    </>
  );
}

/** Replaced facts next to the facts that replaced them, newest first, with when it happened. */
export function ReportContradictions({ collection }: { collection: string }) {
  const pairs = useApi(() => rpc.graph.contradictions.query({ collection, limit: LIMIT }), [collection]);
  return (
    <section aria-labelledby="report-contradictions">
      <h2 id="report-contradictions">Contradictions</h2>
      <ErrorNote error={pairs.error} />
      {pairs.loading && !pairs.data && <Busy label="Reading contradictions…" />}
      {pairs.data && pairs.data.length === 0 && <p className="muted">No fact has been replaced by a newer one.</p>}
      {pairs.data && pairs.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="muted" style={{ textAlign: 'left', padding: '0.3rem 0' }}>
              {pairs.data.length === LIMIT ? `The newest ${LIMIT}` : pairs.data.length} replaced fact(s); the older ones left search.
            </caption>
            <thead>
              <tr>
                <th scope="col">Current</th>
                <th scope="col">Superseded</th>
                <th scope="col">Replaced</th>
              </tr>
            </thead>
            <tbody>
              {pairs.data.map((p) => (
                <tr key={`${p.superseded.id}-${p.current.id}`}>
                  <td>
                    <ReportMemoryLink m={p.current} />
                  </td>
                  <td>
                    <ReportMemoryLink m={p.superseded} />
                  </td>
                  <td>{when(p.superseded_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
