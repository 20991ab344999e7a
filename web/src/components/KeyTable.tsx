import { useNavigate } from 'react-router';
import { rpc, storedKey } from '../api.ts';
import { useSession } from '../session.tsx';
import type { AccountKey } from './KeyTypes.ts';
import { ConfirmButton, ErrorNote, when } from './ui.tsx';
import { useAction } from './use-api.ts';

/** The tenant's keys, masked, with revocation and role changes for admin keys. */
export function KeyTable({ keys, onChanged }: { keys: AccountKey[]; onChanged: () => void }) {
  const { me, canAdmin, signIn, signOut } = useSession();
  const navigate = useNavigate();
  const { error, run } = useAction();
  const active = keys.filter((k) => !k.revoked_at).length;

  async function revoke(key: AccountKey) {
    const done = await run(async () => {
      await rpc.keys.revoke.mutate({ key_id: key.id });
      return true;
    });
    if (!done) return;
    // The dashboard's own key no longer works: every further call would answer 401.
    if (key.id === me?.key.id) {
      signOut();
      navigate('/');
      return;
    }
    onChanged();
  }

  // The service refuses to demote the last admin key (its detail is shown as it is).
  async function setRole(key: AccountKey, role: AccountKey['role']) {
    const done = await run(() => rpc.keys.setRole.mutate({ key_id: key.id, role }));
    if (!done) return;
    // The dashboard's own key changed role: sign in again so its controls follow the new role.
    const own = storedKey();
    if (key.id === me?.key.id && own) await run(() => signIn(own));
    onChanged();
  }

  return (
    <>
      <ErrorNote error={error} />
      <div className="table-wrap">
        <table aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Label</th>
              <th scope="col">Key</th>
              <th scope="col">Role</th>
              <th scope="col">Access</th>
              <th scope="col">Person&apos;s</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              {canAdmin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => {
              const mine = k.id === me?.key.id;
              return (
                <tr key={k.id}>
                  <td>
                    {k.label}
                    {mine && <span className="badge">this dashboard</span>}
                  </td>
                  <td>
                    <code>{k.masked}</code>
                  </td>
                  <td>{k.role}</td>
                  <td>
                    {k.read_only ? <span className="badge warn">read-only</span> : 'read & write'}
                    {k.collections && <span className="muted"> · only {k.collections.join(', ')}</span>}
                  </td>
                  <td>{k.person ? 'yes' : 'no'}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.last_used_at ? when(k.last_used_at) : 'never'}</td>
                  <td>{k.revoked_at ? <span className="muted">revoked {when(k.revoked_at)}</span> : 'active'}</td>
                  {canAdmin && (
                    <td>
                      {!k.revoked_at && (
                        <button
                          type="button"
                          aria-label={`${k.role === 'admin' ? 'Make agent' : 'Make admin'}: ${k.label}`}
                          onClick={() => setRole(k, k.role === 'admin' ? 'agent' : 'admin')}
                        >
                          {k.role === 'admin' ? 'Make agent' : 'Make admin'}
                        </button>
                      )}{' '}
                      {!k.revoked_at && (
                        <ConfirmButton label="Revoke" title={`Revoke the key “${k.label}”?`} confirmLabel="Revoke key" onConfirm={() => revoke(k)}>
                          <p>
                            The key <code>{k.masked}</code> stops working at once, for every agent that uses it, and cannot be restored. Its collection grants
                            stop applying.
                          </p>
                          {mine && <p className="error">This is the key this dashboard is signed in with: you will be signed out.</p>}
                          {active <= 1 && <p className="muted">It is the last active key: the service will refuse, create another key first.</p>}
                        </ConfirmButton>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
