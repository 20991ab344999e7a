import { Link } from 'react-router';
import { query, rpc } from '../api.ts';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/**
 * Which agents were handed this memory, how often, first and last, and through which front ends,
 * from the ledger (docs/trust.md): after a wrong or poisoned memory, who may have acted on it.
 * Admin keys only (the caller leaves it out for others, whom the service refuses).
 */
export function MemoryGivenTo({ collection, id }: { collection: string; id: string }) {
  const given = useApi(() => rpc.ledger.memory.query({ collection, id }), [collection, id]);
  const agents = given.data?.agents;
  return (
    <section aria-labelledby="given-to-title">
      <h2 id="given-to-title">Given to</h2>
      <ErrorNote error={given.error} />
      {given.loading && !agents && <Busy label="Reading the ledger…" />}
      {agents && agents.length === 0 && <p className="muted">No agent has been given this memory in the time the ledger keeps.</p>}
      {agents && agents.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Given to">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Times</th>
                <th scope="col">First</th>
                <th scope="col">Last</th>
                <th scope="col">Via</th>
              </tr>
            </thead>
            <tbody>
              {agents.map((a) => (
                <tr key={`${a.agent.id}/${a.agent.label}`}>
                  <td>{a.agent.label}</td>
                  <td>{a.times.toLocaleString()}</td>
                  <td>{when(a.first_at)}</td>
                  <td>{when(a.last_at)}</td>
                  <td>{a.via.join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p>
        <Link to={`/usage/ledger${query({ memory_id: id })}`}>Every ledger entry that handed it over</Link>
      </p>
    </section>
  );
}
