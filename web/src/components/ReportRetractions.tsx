import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { ReportMemoryLink } from './ReportContradictions.tsx';
import { HOW } from './RetractionHow.ts';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/** How many retractions the page asks for (the service allows up to 1000). */
const LIMIT = 100;

/**
 * The collection's corrections (docs/time.md, "Retraction"): retracted memories, the latest
 * retraction first, with how, when and why; a key that can write undoes one here, which takes it
 * off the list. Nothing is deleted either way, so no confirmation is asked.
 */
export function ReportRetractions({ collection }: { collection: string }) {
  const { canWrite } = useSession();
  const list = useApi(() => rpc.graph.retractions.query({ collection, limit: LIMIT }), [collection]);
  const undo = useAction();

  async function unretract(id: string) {
    if (await undo.run(() => rpc.memories.unretract.mutate({ collection, id }))) list.reload();
  }

  return (
    <section aria-labelledby="report-retractions">
      <h2 id="report-retractions">Retractions</h2>
      <ErrorNote error={list.error} />
      <ErrorNote error={undo.error} />
      {list.loading && !list.data && <Busy label="Reading retractions…" />}
      {list.data && list.data.length === 0 && <p className="muted">No memory has been retracted.</p>}
      {list.data && list.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="muted" style={{ textAlign: 'left', padding: '0.3rem 0' }}>
              {list.data.length === LIMIT ? `The latest ${LIMIT}` : list.data.length} retracted memor{list.data.length === 1 ? 'y' : 'ies'}; search leaves each
              out once it ended, or always when it was never true.
            </caption>
            <thead>
              <tr>
                <th scope="col">Memory</th>
                <th scope="col">How</th>
                <th scope="col">Reason</th>
                <th scope="col">Retracted</th>
                {canWrite && <th scope="col">Undo</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.map((m) => (
                <tr key={m.id}>
                  <td>
                    <ReportMemoryLink m={m} />
                  </td>
                  <td>
                    {m.retraction && HOW[m.retraction.how]}
                    {m.retraction?.how === 'ended' && <div className="muted">ended {when(m.retraction.at)}</div>}
                  </td>
                  <td>{m.retraction?.reason ?? <span className="muted">—</span>}</td>
                  <td>{when(m.retraction?.retracted_at)}</td>
                  {canWrite && (
                    <td>
                      <button type="button" disabled={undo.busy} aria-label={`Undo the retraction of: ${m.text}`} onClick={() => void unretract(m.id)}>
                        Undo
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
