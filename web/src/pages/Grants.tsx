import { useState } from 'react';
import { useParams } from 'react-router';
import { rpc } from '../api.ts';
import { CollectionNav } from '../components/CollectionNav.tsx';
import { GRANT_KIND_NAMES, GrantForm, granteeOf } from '../components/GrantForm.tsx';
import type { AccountGrant } from '../components/KeyTypes.ts';
import { Busy, ConfirmButton, ErrorNote } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Which keys, people and teams may read or write one collection (docs/people.md). */
export function Grants() {
  const { name = '' } = useParams();
  const { me, canAdmin } = useSession();
  const grants = useApi(() => rpc.grants.list.query({ name }), [name, me?.key.id]);
  const agents = useApi(() => rpc.agents.list.query(), [me?.key.id]);
  // The form's pickers: keys (less those that act for a person, granted through the person), people and teams.
  const keys = useApi(() => rpc.keys.list.query(), [me?.key.id]);
  const people = useApi(() => rpc.people.list.query({}), [me?.key.id]);
  const teams = useApi(() => rpc.teams.list.query({}), [me?.key.id]);
  // "Change" on a row picks that grantee in the form (remounted with its current flags).
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
        A collection is open to every key of the account until its first grant. From then on only the keys, people and teams granted here can read it (can read)
        or write it (can write); the others get 403 and no longer see it in lists or searches. Removing the last grant opens it again.
      </p>
      <ErrorNote error={grants.error} />
      {grants.loading && !data && <Busy label="Loading grants…" />}
      {data && (
        <>
          <p>
            {data.restricted ? (
              <>
                <span className="badge warn">restricted</span> Only the keys, people and teams below can use this collection.
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
                    <th scope="col">Granted to</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Can read</th>
                    <th scope="col">Can write</th>
                    {canAdmin && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.grants.map((g) => (
                    <tr key={granteeOf(g)}>
                      <td>
                        {g.label || <code className="muted">{g.id}</code>}
                        {g.id === me?.key.id && <span className="badge">this dashboard</span>}
                      </td>
                      <td>
                        <span className="badge">{GRANT_KIND_NAMES[g.kind].picker.toLowerCase()}</span>
                      </td>
                      <td>{g.can_read ? 'yes' : 'no'}</td>
                      <td>{g.can_write ? 'yes' : 'no'}</td>
                      {canAdmin && (
                        <td className="row">
                          <button
                            type="button"
                            onClick={() => {
                              setPick(granteeOf(g));
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
                            {g.id === me?.key.id && data.grants.length > 1 && (
                              <p className="error">This is the dashboard's own grant: it will lose access to this collection.</p>
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
          <ErrorNote error={agents.error ?? keys.error ?? people.error ?? teams.error} />
          {canAdmin && agents.data && keys.data && people.data && teams.data && (
            <GrantForm
              key={`${formRound}-${data.restricted}`}
              collection={name}
              current={data}
              agents={agents.data}
              keys={keys.data}
              people={people.data}
              teams={teams.data}
              pick={pick}
              onSaved={grants.reload}
            />
          )}
        </>
      )}
    </>
  );
}
