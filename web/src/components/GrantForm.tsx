import { useState } from 'react';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { KeyCheckbox } from './KeyCheckbox.tsx';
import type { AccountAgent, AccountGrant, AccountGrants, AccountKey } from './KeyTypes.ts';
import type { TenantPerson, TenantTeam } from './PeopleNames.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

type GrantKind = AccountGrant['kind'];

/** The grantee kinds (GRANT_KINDS in src/schemas/access.ts, read from this record's keys) and the label of each one's picker. */
export const GRANT_KIND_NAMES: Record<GrantKind, { choice: string; picker: string }> = {
  key: { choice: 'an API key (agent)', picker: 'Agent' },
  person: { choice: 'a person', picker: 'Person' },
  team: { choice: 'a team', picker: 'Team' },
};
const GRANT_KINDS = Object.keys(GRANT_KIND_NAMES) as GrantKind[];

/** A grantee picked in the form (and from a row's "Change"): `person:<id>`. */
export const granteeOf = (g: { kind: GrantKind; id: string }) => `${g.kind}:${g.id}`;

/**
 * Adds or changes one grant on a collection: to a key, a person or a team (docs/people.md). A key
 * that acts for a person is left out of the keys: it is granted through its person (the service
 * answers 400). The first grant restricts the collection: granting someone else alone would shut
 * out the dashboard's own key, or its person (and the service refuses a restriction that leaves no
 * one able to write), so by default the dashboard's own grantee is granted read and write first.
 */
export function GrantForm({
  collection,
  current,
  agents,
  keys,
  people,
  teams,
  pick,
  onSaved,
}: {
  collection: string;
  current: AccountGrants;
  agents: AccountAgent[];
  keys: AccountKey[];
  people: TenantPerson[];
  teams: TenantTeam[];
  pick: string;
  onSaved: () => void;
}) {
  const { me } = useSession();
  const actsFor = new Map(keys.map((k) => [k.id, k.acts_for]));
  const grantable: Record<GrantKind, Array<{ id: string; label: string; note?: string }>> = {
    key: agents
      .filter((a) => !actsFor.get(a.id))
      .map((a) => ({ id: a.id, label: a.label, note: [a.read_only && 'read-only key', a.id === me?.key.id && 'this dashboard'].filter(Boolean).join(', ') })),
    person: people
      .filter((p) => p.state === 'active' || p.state === 'invited')
      .map((p) => ({ id: p.id, label: p.name && p.name !== p.email ? `${p.name} (${p.email})` : p.email, note: p.role === 'viewer' ? 'viewer' : undefined })),
    team: teams.map((t) => ({ id: t.id, label: t.name })),
  };
  // Whom the dashboard itself is: a session is its person (its id is the person's), a person's key acts for that person, else the key.
  const self: { kind: GrantKind; id: string } | null = !me
    ? null
    : people.some((p) => p.id === me.key.id)
      ? { kind: 'person', id: me.key.id }
      : actsFor.get(me.key.id)
        ? { kind: 'person', id: actsFor.get(me.key.id)! }
        : { kind: 'key', id: me.key.id };
  const existing = (kind: GrantKind, id: string) => current.grants.find((g) => g.kind === kind && g.id === id);
  const firstOf = (kind: GrantKind) => grantable[kind].find((g) => !(self?.kind === kind && self.id === g.id))?.id ?? grantable[kind][0]?.id ?? '';

  const [picked] = useState(() => {
    const [kind, id] = pick.split(':') as [GrantKind, string];
    return pick && GRANT_KINDS.includes(kind) ? { kind, id } : { kind: 'key' as GrantKind, id: firstOf('key') };
  });
  const [kind, setKind] = useState<GrantKind>(picked.kind);
  const [granteeId, setGranteeId] = useState(picked.id);
  const [canRead, setCanRead] = useState(existing(kind, granteeId)?.can_read ?? true);
  const [canWrite, setCanWrite] = useState(existing(kind, granteeId)?.can_write ?? false);
  const [keepMe, setKeepMe] = useState(true);
  const { busy, error, run } = useAction();
  const isSelf = !!self && self.kind === kind && self.id === granteeId;
  const firstGrantForOther = !current.restricted && !!self && !isSelf;
  const selfLabel = self?.kind === 'person' ? (people.find((p) => p.id === self.id)?.email ?? me?.key.label) : me?.key.label;

  function choose(k: GrantKind, id: string) {
    setKind(k);
    setGranteeId(id);
    const g = existing(k, id);
    setCanRead(g?.can_read ?? true);
    setCanWrite(g?.can_write ?? false);
  }

  const body = (k: GrantKind, id: string) => (k === 'key' ? { agent_key_id: id } : k === 'person' ? { person_id: id } : { team_id: id });

  async function save() {
    const ok = await run(async () => {
      if (firstGrantForOther && keepMe && self) await rpc.grants.put.mutate({ name: collection, ...body(self.kind, self.id), can_read: true, can_write: true });
      await rpc.grants.put.mutate({ name: collection, ...body(kind, granteeId), can_read: canRead, can_write: canWrite });
      return true;
    });
    // Reload even after a failure: the dashboard's own grant may have been saved before it.
    onSaved();
    if (ok) setKeepMe(true);
  }

  const agent = kind === 'key' ? agents.find((a) => a.id === granteeId) : undefined;
  const choices = grantable[kind];
  return (
    <section className="card" aria-labelledby="grant-form-title" style={{ marginTop: '1rem' }}>
      <h2 id="grant-form-title">Add or change a grant</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div className="row" style={{ alignItems: 'flex-end', gap: '0 1rem' }}>
          <div className="field" style={{ flex: '1 1 10rem' }}>
            <label htmlFor="grant-kind">Grant to</label>
            <select id="grant-kind" value={kind} onChange={(e) => choose(e.target.value as GrantKind, firstOf(e.target.value as GrantKind))}>
              {GRANT_KINDS.map((k) => (
                <option key={k} value={k}>
                  {GRANT_KIND_NAMES[k].choice}
                </option>
              ))}
            </select>
          </div>
          <div className="field" style={{ flex: '2 1 14rem' }}>
            <label htmlFor="grant-who">{GRANT_KIND_NAMES[kind].picker}</label>
            <select id="grant-who" autoFocus={!!pick} value={granteeId} onChange={(e) => choose(kind, e.target.value)} required>
              {choices.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.label}
                  {g.note ? ` (${g.note})` : ''}
                  {existing(kind, g.id) ? ' (granted)' : ''}
                </option>
              ))}
            </select>
          </div>
        </div>
        {choices.length === 0 && (
          <p className="muted">
            {kind === 'key' ? 'No key of no person: a person’s key is granted through its person.' : kind === 'person' ? 'No people yet.' : 'No teams yet.'}
          </p>
        )}
        {kind === 'key' && <p className="muted">Keys that act for a person are not listed: grant their person, or one of the person’s teams.</p>}
        <div className="row" style={{ gap: '1.2rem' }}>
          <KeyCheckbox id="grant-read" checked={canRead} onChange={setCanRead}>
            Can read
          </KeyCheckbox>
          <KeyCheckbox id="grant-write" checked={canWrite} onChange={setCanWrite}>
            Can write
          </KeyCheckbox>
        </div>
        {agent?.read_only && canWrite && <p className="muted">This key is read-only: it still cannot write, whatever its grant says.</p>}
        {firstGrantForOther && (
          <KeyCheckbox id="grant-keep-me" checked={keepMe} onChange={setKeepMe}>
            Also grant this dashboard&apos;s {self?.kind === 'person' ? 'person' : 'key'} (“{selfLabel}”) read and write, so it keeps managing this collection
            (the first grant shuts out everyone not granted)
          </KeyCheckbox>
        )}
        <p>
          <button type="submit" className="primary" disabled={busy || !granteeId}>
            Save grant
          </button>
        </p>
      </form>
      {busy && <Busy label="Saving the grant…" />}
      <ErrorNote error={error} />
    </section>
  );
}
