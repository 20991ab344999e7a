import { useState } from 'react';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { KeyCheckbox } from './KeyCheckbox.tsx';
import type { AccountAgent, AccountGrants } from './KeyTypes.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/**
 * Adds or changes one agent's grant on a collection. The first grant restricts the collection:
 * granting another agent alone would shut out the dashboard's own key (and the service refuses a
 * restriction that leaves no key able to write), so by default the signed-in key is granted read
 * and write first.
 */
export function GrantForm({
  collection,
  current,
  agents,
  pick,
  onSaved,
}: {
  collection: string;
  current: AccountGrants;
  agents: AccountAgent[];
  pick: string;
  onSaved: () => void;
}) {
  const { me } = useSession();
  const existing = (id: string) => current.grants.find((g) => g.agent_key_id === id);
  const [agentId, setAgentId] = useState(pick || agents.find((a) => a.id !== me?.key.id)?.id || agents[0]?.id || '');
  const [canRead, setCanRead] = useState(existing(agentId)?.can_read ?? true);
  const [canWrite, setCanWrite] = useState(existing(agentId)?.can_write ?? false);
  const [keepMe, setKeepMe] = useState(true);
  const { busy, error, run } = useAction();
  const firstGrantForOther = !current.restricted && !!me && agentId !== me.key.id;

  function choose(id: string) {
    setAgentId(id);
    const g = existing(id);
    setCanRead(g?.can_read ?? true);
    setCanWrite(g?.can_write ?? false);
  }

  async function save() {
    const ok = await run(async () => {
      if (firstGrantForOther && keepMe) await rpc.grants.put.mutate({ name: collection, agent_key_id: me.key.id, can_read: true, can_write: true });
      await rpc.grants.put.mutate({ name: collection, agent_key_id: agentId, can_read: canRead, can_write: canWrite });
      return true;
    });
    // Reload even after a failure: the dashboard's own grant may have been saved before it.
    onSaved();
    if (ok) setKeepMe(true);
  }

  const agent = agents.find((a) => a.id === agentId);
  return (
    <section className="card" aria-labelledby="grant-form-title" style={{ marginTop: '1rem' }}>
      <h2 id="grant-form-title">Add or change a grant</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div className="field">
          <label htmlFor="grant-agent">Agent</label>
          <select id="grant-agent" autoFocus={!!pick} value={agentId} onChange={(e) => choose(e.target.value)} required>
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.label}
                {a.read_only ? ' (read-only key)' : ''}
                {a.id === me?.key.id ? ' (this dashboard)' : ''}
                {existing(a.id) ? ' (granted)' : ''}
              </option>
            ))}
          </select>
        </div>
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
            Also grant this dashboard's key (“{me?.key.label}”) read and write, so it keeps managing this collection (the first grant shuts out every key not
            granted)
          </KeyCheckbox>
        )}
        <p>
          <button type="submit" className="primary" disabled={busy || !agentId}>
            Save grant
          </button>
        </p>
      </form>
      {busy && <Busy label="Saving the grant…" />}
      <ErrorNote error={error} />
    </section>
  );
}
