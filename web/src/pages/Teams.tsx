import { useState } from 'react';
import { Link } from 'react-router';
import { rpc } from '../api.ts';
import { TEAM_ROLE_CHOICES, TEAM_ROLE_NAMES, type TeamRole, type TenantPerson, type TenantTeam } from '../components/PeopleNames.ts';
import { PeopleTabs } from '../components/PeopleTabs.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/**
 * The tenant's teams and their members (docs/people.md). Admins create, rename and delete teams;
 * members are managed by a tenant admin or an admin of the team. The dashboard does not know which
 * teams the signed-in person administers, so every writing key sees the member controls and the
 * service's refusal is shown as its detail.
 */
export function Teams() {
  const { me, canWrite, canAdmin } = useSession();
  const teams = useApi(() => rpc.teams.list.query({}), [me?.key.id]);
  const people = useApi(() => rpc.people.list.query({}), [me?.key.id]);
  const reload = () => {
    teams.reload();
    people.reload();
  };

  return (
    <>
      <h1>Teams</h1>
      <PeopleTabs />
      <p className="muted">
        A team's people read its team collections. A team may follow a group of the identity provider: its members are then kept in sync at each sign-in. People
        are invited on the <Link to="/people">People</Link> page.
      </p>
      {canAdmin && <TeamForm onSaved={reload} />}
      <ErrorNote error={teams.error} />
      <ErrorNote error={people.error} />
      {teams.loading && !teams.data && <Busy label="Loading teams…" />}
      {teams.data?.length === 0 && <p className="muted">No teams yet.</p>}
      <ul aria-label="Teams" className="team-list">
        {teams.data?.map((t) => (
          <TeamCard key={t.id} team={t} people={people.data ?? []} canWrite={canWrite} canAdmin={canAdmin} onChanged={reload} />
        ))}
      </ul>
    </>
  );
}

/** teams.create, or teams.update of `team`: its name and the provider group it follows. */
function TeamForm({ team, onSaved, onDone }: { team?: TenantTeam; onSaved: () => void; onDone?: () => void }) {
  const [name, setName] = useState(team?.name ?? '');
  const [group, setGroup] = useState(team?.provider_group ?? '');
  const { busy, error, run } = useAction();
  const id = team ? `team-${team.id}` : 'team-new';
  return (
    <form
      aria-label={team ? `Edit team ${team.name}` : 'New team'}
      className={team ? undefined : 'card'}
      onSubmit={async (e) => {
        e.preventDefault();
        const provider_group = group.trim() || null;
        const saved = await run(() =>
          team
            ? rpc.teams.update.mutate({ team_id: team.id, name: name.trim(), provider_group })
            : rpc.teams.create.mutate({ name: name.trim(), provider_group }),
        );
        if (!saved) return;
        if (!team) {
          setName('');
          setGroup('');
        }
        onSaved();
        onDone?.();
      }}
    >
      {!team && (
        <h2 id="team-new-title" style={{ marginTop: 0 }}>
          New team
        </h2>
      )}
      <div className="row" style={{ alignItems: 'flex-end', gap: '0 1rem' }}>
        <div className="field" style={{ flex: '1 1 12rem' }}>
          <label htmlFor={`${id}-name`}>Team name</label>
          <input id={`${id}-name`} required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field" style={{ flex: '1 1 12rem' }}>
          <label htmlFor={`${id}-group`}>Provider group (optional)</label>
          <input id={`${id}-group`} maxLength={200} value={group} onChange={(e) => setGroup(e.target.value)} />
        </div>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={busy || !name.trim()}>
          {team ? 'Save team' : 'Create team'}
        </button>
        {onDone && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      {busy && <Busy label="Saving…" />}
      <ErrorNote error={error} />
    </form>
  );
}

function TeamCard({
  team,
  people,
  canWrite,
  canAdmin,
  onChanged,
}: {
  team: TenantTeam;
  people: TenantPerson[];
  canWrite: boolean;
  canAdmin: boolean;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const candidates = people.filter((p) => (p.state === 'active' || p.state === 'invited') && !team.members.some((m) => m.person_id === p.id));
  const [personId, setPersonId] = useState('');
  const [role, setRole] = useState<TeamRole>('member');
  const chosen = candidates.some((p) => p.id === personId) ? personId : (candidates[0]?.id ?? '');

  async function act(fn: () => Promise<unknown>) {
    const done = await action.run(async () => {
      await fn();
      return true;
    });
    if (done) onChanged();
  }

  return (
    <li className="card" aria-label={`Team ${team.name}`}>
      {editing ? (
        <TeamForm team={team} onSaved={onChanged} onDone={() => setEditing(false)} />
      ) : (
        <div className="row" style={{ justifyContent: 'space-between' }}>
          <h2 style={{ margin: 0, fontSize: '1.05rem', wordBreak: 'break-word' }}>
            {team.name}
            {team.provider_group && (
              <span className="badge" title="Its members follow this group of the identity provider">
                group {team.provider_group}
              </span>
            )}
          </h2>
          {canAdmin && (
            <div className="row">
              <button type="button" aria-label={`Edit team ${team.name}`} onClick={() => setEditing(true)}>
                Edit
              </button>
              <ConfirmButton
                label="Delete"
                ariaLabel={`Delete team ${team.name}`}
                title={`Delete the team “${team.name}”?`}
                confirmLabel="Delete team"
                onConfirm={() => act(() => rpc.teams.delete.mutate({ team_id: team.id }))}
              >
                <p>Its memberships go with it, and no one reads its team collections through it any more.</p>
              </ConfirmButton>
            </div>
          )}
        </div>
      )}
      <p className="muted" style={{ margin: '0.2rem 0', fontSize: '0.85rem' }}>
        Since {when(team.created_at)}
      </p>
      <ErrorNote error={action.error} />
      {team.members.length === 0 ? (
        <p className="muted">No members yet.</p>
      ) : (
        <ul aria-label={`Members of ${team.name}`} className="member-list">
          {team.members.map((m) => (
            <li key={m.person_id} className="row">
              <span style={{ wordBreak: 'break-word' }}>{m.name && m.name !== m.email ? `${m.name} (${m.email})` : m.email}</span>
              {m.role === 'admin' && <span className="badge">team admin</span>}
              {m.source === 'provider' && (
                <span className="badge" title="Kept in sync with the provider's group at each sign-in">
                  from provider
                </span>
              )}
              {canWrite && (
                <ConfirmButton
                  label="Remove"
                  ariaLabel={`Remove ${m.email} from ${team.name}`}
                  title={`Remove ${m.email} from “${team.name}”?`}
                  confirmLabel="Remove member"
                  onConfirm={() => act(() => rpc.teams.deleteMember.mutate({ team_id: team.id, person_id: m.person_id }))}
                >
                  <p>They no longer read this team's collections through it.</p>
                </ConfirmButton>
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && candidates.length > 0 && (
        <form
          aria-label={`Add a member to ${team.name}`}
          className="row"
          style={{ alignItems: 'flex-end' }}
          onSubmit={(e) => {
            e.preventDefault();
            void act(() => rpc.teams.putMember.mutate({ team_id: team.id, person_id: chosen, role }));
          }}
        >
          <div className="field" style={{ flex: '2 1 12rem', marginBottom: 0 }}>
            <label htmlFor={`add-${team.id}-person`}>Person</label>
            <select id={`add-${team.id}-person`} value={chosen} onChange={(e) => setPersonId(e.target.value)}>
              {candidates.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.email}
                  {p.state === 'invited' ? ' (invited)' : ''}
                </option>
              ))}
            </select>
          </div>
          <div className="field" style={{ flex: '1 1 8rem', marginBottom: 0 }}>
            <label htmlFor={`add-${team.id}-role`}>Team role</label>
            <select id={`add-${team.id}-role`} value={role} onChange={(e) => setRole(e.target.value as TeamRole)}>
              {TEAM_ROLE_CHOICES.map((r) => (
                <option key={r} value={r}>
                  {TEAM_ROLE_NAMES[r]}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" disabled={action.busy || !chosen}>
            Add to team
          </button>
        </form>
      )}
    </li>
  );
}
