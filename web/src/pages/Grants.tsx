import { useState } from 'react';
import { useParams } from 'react-router';
import { rpc } from '../api.ts';
import { CollectionNav } from '../components/CollectionNav.tsx';
import { GrantForm } from '../components/GrantForm.tsx';
import type { AccountGrant } from '../components/KeyTypes.ts';
import { Busy, ConfirmButton, ErrorNote } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Which agents (API keys) may read or write one collection. */
export function Grants() {
  const { name = '' } = useParams();
  const { me, canAdmin } = useSession();
  const grants = useApi(() => rpc.grants.list.query({ name }), [name, me?.key.id]);
  const agents = useApi(() => rpc.agents.list.query(), [me?.key.id]);
  // "Change" on a row picks that agent in the form (remounted with its current flags).
  const [pick, setPick] = useState('');
  const [formRound, setFormRound] = useState(0);
  const removal = useAction();

  async function remove(g: AccountGrant) {
    const done = await removal.run(async () => {
      await rpc.grants.delete.mutate({ name, agent_key_id: g.id });
      return true;
    });
    if (done) grants.reload();
  }

  const data = grants.data;
  return (
    <>
      <CollectionNav name={name} />
      <h2>Grants</h2>
      <p className="muted">
        A collection is open to every key of the account until its first grant. From then on only the keys granted here can read it (can read) or write it (can
        write); the others get 403 and no longer see it in lists or searches. Removing the last grant opens it again.
      </p>
      <ErrorNote error={grants.error} />
      {grants.loading && !data && <Busy label="Loading grants…" />}
      {data && (
        <>
          <p>
            {data.restricted ? (
              <>
                <span className="badge warn">restricted</span> Only the keys below can use this collection.
              </>
            ) : (
              <>
                <span className="badge">open</span> Every key of the account can use this collection (no grants yet).
              </>
            )}
          </p>
          <ErrorNote error={removal.error} />
          {data.grants.length > 0 && (
            <div className="table-wrap">
              <table aria-label="Grants">
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Can read</th>
                    <th scope="col">Can write</th>
                    {canAdmin && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.grants.map((g) => (
                    <tr key={g.id}>
                      <td>
                        {g.label}
                        {g.agent_key_id === me?.key.id && <span className="badge">this dashboard</span>}
                      </td>
                      <td>{g.can_read ? 'yes' : 'no'}</td>
                      <td>{g.can_write ? 'yes' : 'no'}</td>
                      {canAdmin && (
                        <td className="row">
                          <button
                            type="button"
                            onClick={() => {
                              setPick(g.id);
                              setFormRound((r) => r + 1);
                            }}
                          >
                            Change
                          </button>
                          <ConfirmButton label="Remove" title={`Remove the grant of “${g.label}”?`} confirmLabel="Remove grant" onConfirm={() => remove(g)}>
                            {data.grants.length === 1 ? (
                              <p>It is the last grant: the collection opens again to every key of the account.</p>
                            ) : (
                              <p>“{g.label}” will no longer be able to read or write this collection.</p>
                            )}
                            {g.agent_key_id === me?.key.id && data.grants.length > 1 && (
                              <p className="error">This is the dashboard's own key: it will lose access to this collection.</p>
                            )}
                          </ConfirmButton>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <ErrorNote error={agents.error} />
          {canAdmin && agents.data && (
            <GrantForm key={`${formRound}-${data.restricted}`} collection={name} current={data} agents={agents.data} pick={pick} onSaved={grants.reload} />
          )}
        </>
      )}
    </>
  );
}
