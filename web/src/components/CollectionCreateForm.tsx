import { useState } from 'react';
import { rpc } from '../api.ts';
import { KeyCheckbox } from './KeyCheckbox.tsx';
import { SCOPE_CHOICES, SCOPE_NAMES, type TenantTeam } from './PeopleNames.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/**
 * collections.create: a new, empty collection (writing keys only; the caller leaves it out
 * otherwise), with its scope (docs/people.md, "Scopes"): the organization by default; personal,
 * the signed-in person's own (the service picks the caller's person, and says so when the key has
 * none); or some teams. Whether the caller may pick them the service decides.
 */
export function CollectionCreateForm({ teams, onCreated }: { teams: TenantTeam[]; onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<(typeof SCOPE_CHOICES)[number]>('org');
  const [teamIds, setTeamIds] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const { busy, error, run } = useAction();
  return (
    <form
      aria-labelledby="new-collection-title"
      className="card"
      style={{ marginTop: '1.2rem' }}
      onSubmit={async (e) => {
        e.preventDefault();
        const body = {
          name: name.trim(),
          ...(description.trim() && { description: description.trim() }),
          scope,
          ...(scope === 'team' && { teams: teamIds }),
        };
        const made = await run(() => rpc.collections.create.mutate(body));
        if (!made) return;
        setName('');
        setDescription('');
        setScope('org');
        setTeamIds([]);
        onCreated(made.name);
      }}
    >
      <h2 id="new-collection-title" style={{ marginTop: 0 }}>
        New collection
      </h2>
      <div className="row" style={{ alignItems: 'flex-start', gap: '0 1rem' }}>
        <div className="field" style={{ flex: '1 1 14rem' }}>
          <label htmlFor="collection-name">Name</label>
          <input
            id="collection-name"
            required
            maxLength={64}
            pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]{0,63}"
            title="1 to 64 characters of A-Z a-z 0-9 . _ - not starting with a dot"
            aria-describedby="collection-name-hint"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <span id="collection-name-hint" className="muted" style={{ fontSize: '0.85rem' }}>
            Letters, digits, dot, dash and underscore; not starting with a dot.
          </span>
        </div>
        <div className="field" style={{ flex: '3 1 20rem' }}>
          <label htmlFor="collection-description">Description (optional)</label>
          <input id="collection-description" maxLength={2000} value={description} onChange={(e) => setDescription(e.target.value)} />
        </div>
      </div>
      <div className="field">
        <label htmlFor="collection-scope">Scope</label>
        <select id="collection-scope" value={scope} onChange={(e) => setScope(e.target.value as typeof scope)}>
          {SCOPE_CHOICES.map((s) => (
            <option key={s} value={s}>
              {s === 'personal' ? 'personal: your own' : SCOPE_NAMES[s]}
            </option>
          ))}
        </select>
      </div>
      {scope === 'team' && (
        <fieldset style={{ border: 0, padding: 0, margin: '0 0 0.6rem' }}>
          <legend>Teams</legend>
          {teams.length === 0 && <p className="muted">No teams yet: create one on the Teams page.</p>}
          {teams.map((t) => (
            <KeyCheckbox
              key={t.id}
              id={`collection-team-${t.id}`}
              checked={teamIds.includes(t.id)}
              onChange={(on) => setTeamIds(on ? [...teamIds, t.id] : teamIds.filter((id) => id !== t.id))}
            >
              {t.name}
            </KeyCheckbox>
          ))}
          <span className="muted" style={{ fontSize: '0.85rem' }}>
            Only the people of these teams read it, admins included: pick a team you are in to keep seeing it.
          </span>
        </fieldset>
      )}
      <button type="submit" className="primary" disabled={busy || !name.trim() || (scope === 'team' && teamIds.length === 0)}>
        Create collection
      </button>
      {busy && <Busy label="Creating…" />}
      <ErrorNote error={error} />
    </form>
  );
}
