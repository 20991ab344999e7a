import { useState } from 'react';
import { rpc, type ApiOutput } from '../api.ts';
import { KeyCheckbox } from './KeyCheckbox.tsx';
import { KeyShownOnce } from './KeyShownOnce.tsx';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** Creates a key (a new agent identity) and shows its secret once. */
export function KeyCreateForm({ onCreated }: { onCreated: () => void }) {
  const [label, setLabel] = useState('');
  const [readOnly, setReadOnly] = useState(false);
  const [admin, setAdmin] = useState(false);
  const [person, setPerson] = useState(false);
  const [created, setCreated] = useState<ApiOutput['keys']['create'] | null>(null);
  const { busy, error, run } = useAction();

  async function submit() {
    const key = await run(() => rpc.keys.create.mutate({ label: label.trim(), role: admin ? 'admin' : 'agent', read_only: readOnly, person }));
    if (!key) return;
    setCreated(key);
    setLabel('');
    setReadOnly(false);
    setAdmin(false);
    setPerson(false);
    onCreated();
  }

  return (
    <section className="card" aria-labelledby="key-create-title">
      <h2 id="key-create-title">Create a key</h2>
      <p className="muted">Give each agent or person its own key, so its writes are attributed to it and it can be granted or revoked alone.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="field">
          <label htmlFor="key-label">Label</label>
          <input id="key-label" value={label} maxLength={100} placeholder="e.g. support-bot" onChange={(e) => setLabel(e.target.value)} required />
        </div>
        <KeyCheckbox id="key-read-only" checked={readOnly} onChange={setReadOnly}>
          Read-only (may read and search, never write)
        </KeyCheckbox>
        <KeyCheckbox id="key-admin" checked={admin} onChange={setAdmin}>
          Admin (may also manage keys, grants and the account&apos;s settings; agents need none of that)
        </KeyCheckbox>
        <KeyCheckbox id="key-person" checked={person} onChange={setPerson}>
          Person&apos;s key (for someone&apos;s own use, never an agent&apos;s: what it writes is trusted as a person&apos;s words and not held in quarantine by
          default)
        </KeyCheckbox>
        <p>
          <button type="submit" className="primary" disabled={busy || !label.trim()}>
            Create key
          </button>
        </p>
      </form>
      {busy && <Busy label="Creating the key…" />}
      <ErrorNote error={error} />
      {created && (
        <KeyShownOnce
          id="new-key"
          label="New API key"
          what={`the ${created.role} key “${created.label}”${created.read_only ? ' (read-only)' : ''}${created.person ? ', a person’s' : ''}`}
          value={created.api_key}
          onDone={() => setCreated(null)}
        />
      )}
    </section>
  );
}
