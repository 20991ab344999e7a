import { Link } from 'react-router';
import { rpc } from '../api.ts';
import { KeyCreateForm } from '../components/KeyCreate.tsx';
import { KeyRotate } from '../components/KeyRotate.tsx';
import { KeyTable } from '../components/KeyTable.tsx';
import { Busy, ErrorNote, when } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Keys & agents: every API key is an agent identity; create (shown once), revoke, rotate. */
export function Keys() {
  const { me, canWrite, canAdmin } = useSession();
  // The key id changes on rotation: load again for the new one.
  const keys = useApi(() => rpc.keys.list.query(), [me?.key.id]);
  const agents = useApi(() => rpc.agents.list.query(), [me?.key.id]);
  const reload = () => {
    keys.reload();
    agents.reload();
  };

  return (
    <>
      <h1>Keys &amp; agents</h1>
      <p className="muted">
        Each API key is an agent: its writes carry its label, and collections can be granted to it alone. Keys are shown masked; a key's secret is shown only
        once, when it is made.
      </p>
      {canAdmin && <KeyCreateForm onCreated={reload} />}

      <h2>API keys</h2>
      <ErrorNote error={keys.error} />
      {keys.loading && !keys.data && <Busy label="Loading keys…" />}
      {keys.data && <KeyTable keys={keys.data} onChanged={reload} />}

      {canWrite && <KeyRotate onRotated={reload} />}

      <h2>Agents</h2>
      <p className="muted">
        The active keys, as the agents that collection grants name. Grant or restrict them on a collection's Grants tab (from{' '}
        <Link to="/collections">Collections</Link>).
      </p>
      <ErrorNote error={agents.error} />
      {agents.loading && !agents.data && <Busy label="Loading agents…" />}
      {agents.data && (
        <div className="table-wrap">
          <table aria-label="Agents">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Role</th>
                <th scope="col">Access</th>
                <th scope="col">Since</th>
                <th scope="col">Id</th>
              </tr>
            </thead>
            <tbody>
              {agents.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    {a.label}
                    {a.id === me?.key.id && <span className="badge">this dashboard</span>}
                  </td>
                  <td>{a.role}</td>
                  <td>{a.read_only ? <span className="badge warn">read-only</span> : 'read & write'}</td>
                  <td>{when(a.created_at)}</td>
                  <td>
                    <code className="muted">{a.id}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
