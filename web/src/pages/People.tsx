import { useState } from 'react';
import { Link } from 'react-router';
import { rpc } from '../api.ts';
import { PERSON_ROLE_CHOICES, ROLE_NAMES, STATE_NAMES, type TenantPerson } from '../components/PeopleNames.ts';
import { PeopleTabs } from '../components/PeopleTabs.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/**
 * The tenant's people (docs/people.md): invite, change a role, suspend or restore, remove. Admins
 * and owners see the controls; everyone else reads the list. What a role may do to whom (only an
 * owner touches an owner, the tenant keeps an active owner) the service decides, and its detail is shown.
 */
export function People() {
  const { me, canAdmin } = useSession();
  const people = useApi(() => rpc.people.list.query({}), [me?.key.id]);
  const action = useAction();

  async function change(p: TenantPerson, patch: { role?: TenantPerson['role']; state?: 'active' | 'suspended' }) {
    const done = await action.run(() => rpc.people.update.mutate({ person_id: p.id, ...patch }));
    if (done) people.reload();
  }
  async function remove(p: TenantPerson) {
    const done = await action.run(async () => {
      await rpc.people.remove.mutate({ person_id: p.id });
      return true;
    });
    if (done) people.reload();
  }

  return (
    <>
      <h1>People</h1>
      <PeopleTabs />
      <p className="muted">
        The people of this tenant, who sign in through its identity provider. Their role says what they may do; their teams (see <Link to="/teams">Teams</Link>)
        which team collections they read.
      </p>
      {canAdmin && <InviteForm onInvited={people.reload} />}

      <h2>People</h2>
      <ErrorNote error={people.error} />
      <ErrorNote error={action.error} />
      {people.loading && !people.data && <Busy label="Loading people…" />}
      {people.data?.length === 0 && <p className="muted">No one yet.{canAdmin && ' Invite someone above.'}</p>}
      {!!people.data?.length && (
        <div className="table-wrap">
          <table aria-label="People">
            <thead>
              <tr>
                <th scope="col">Person</th>
                <th scope="col">Role</th>
                <th scope="col">State</th>
                <th scope="col">Teams</th>
                <th scope="col">Last sign-in</th>
                {canAdmin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {people.data.map((p) => (
                <tr key={p.id}>
                  <td>
                    {p.name && p.name !== p.email && (
                      <>
                        {p.name}
                        <br />
                      </>
                    )}
                    <span className="muted">{p.email}</span>
                  </td>
                  <td>
                    {canAdmin ? (
                      <select
                        aria-label={`Role of ${p.email}`}
                        value={p.role}
                        disabled={action.busy}
                        onChange={(e) => void change(p, { role: e.target.value as TenantPerson['role'] })}
                      >
                        {PERSON_ROLE_CHOICES.map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>
                    ) : (
                      p.role
                    )}
                  </td>
                  <td>{p.state === 'active' ? STATE_NAMES[p.state] : <span className="badge warn">{STATE_NAMES[p.state]}</span>}</td>
                  <td>
                    {p.teams.length ? p.teams.map((t) => `${t.name}${t.role === 'admin' ? ' (admin)' : ''}`).join(', ') : <span className="muted">—</span>}
                  </td>
                  <td>{p.last_sign_in_at ? when(p.last_sign_in_at) : 'never'}</td>
                  {canAdmin && (
                    <td>
                      <div className="row">
                        {p.state === 'suspended' ? (
                          <button type="button" aria-label={`Restore ${p.email}`} disabled={action.busy} onClick={() => void change(p, { state: 'active' })}>
                            Restore
                          </button>
                        ) : (
                          p.state !== 'removed' && (
                            <ConfirmButton
                              label="Suspend"
                              ariaLabel={`Suspend ${p.email}`}
                              title={`Suspend ${p.email}?`}
                              confirmLabel="Suspend"
                              onConfirm={() => change(p, { state: 'suspended' })}
                            >
                              <p>Their sessions end at once and their keys are refused from the next call, until they are restored.</p>
                            </ConfirmButton>
                          )
                        )}
                        {p.state !== 'removed' && (
                          <ConfirmButton
                            label="Remove"
                            ariaLabel={`Remove ${p.email}`}
                            title={`Remove ${p.email}?`}
                            confirmLabel="Remove person"
                            onConfirm={() => remove(p)}
                          >
                            <p>
                              They leave every team, their sessions end and their keys are refused from the next call. This cannot be undone; they stay named as
                              removed where they wrote.
                            </p>
                          </ConfirmButton>
                        )}
                      </div>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** people.invite: an invited person, active at their first sign-in; the service mails them the link. */
function InviteForm({ onInvited }: { onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<TenantPerson['role']>('member');
  const [sent, setSent] = useState('');
  const { busy, error, run } = useAction();
  return (
    <form
      aria-labelledby="invite-title"
      className="card"
      onSubmit={async (e) => {
        e.preventDefault();
        setSent('');
        const made = await run(() => rpc.people.invite.mutate({ email: email.trim(), role }));
        if (!made) return;
        setSent(made.email);
        setEmail('');
        onInvited();
      }}
    >
      <h2 id="invite-title" style={{ marginTop: 0 }}>
        Invite a person
      </h2>
      <div className="row" style={{ alignItems: 'flex-start', gap: '0 1rem' }}>
        <div className="field" style={{ flex: '2 1 16rem' }}>
          <label htmlFor="invite-email">E-mail</label>
          <input id="invite-email" type="email" required maxLength={320} value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field" style={{ flex: '1 1 12rem' }}>
          <label htmlFor="invite-role">Role</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as TenantPerson['role'])}>
            {PERSON_ROLE_CHOICES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <span className="muted" style={{ fontSize: '0.85rem' }}>
            {ROLE_NAMES[role]}
          </span>
        </div>
      </div>
      <button type="submit" className="primary" disabled={busy || !email.trim()}>
        Invite
      </button>
      {busy && <Busy label="Inviting…" />}
      {sent && (
        <p className="ok" role="status">
          Invited {sent}: they get a mail with the link to sign in.
        </p>
      )}
      <ErrorNote error={error} />
    </form>
  );
}
