import { useState } from 'react';
import type { ConnectionView } from '../../../src/schemas/connectors.ts';
import { api, ApiError, query } from '../api.ts';
import { FileCollectionInput } from './FileCollectionInput.tsx';
import { CONNECTION_PROVIDERS, connectionProvider, type ConnectionField } from './ConnectionProviders.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** A JSON object typed by hand; an empty box is {}. Throws a readable message otherwise. */
function jsonObject(text: string, what: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ApiError(0, `${what} is not valid JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ApiError(0, `${what} must be a JSON object, e.g. {"key": "value"}`);
  return v as Record<string, unknown>;
}

const filled = (fields: ConnectionField[], values: Record<string, string>) =>
  Object.fromEntries(fields.flatMap((f) => (values[f.name]?.trim() ? [[f.name, values[f.name]!.trim()]] : [])));

/** Connect a provider to a collection: with a token pasted here, or through the provider's OAuth consent. */
export function ConnectionCreateForm({ onCreated }: { onCreated(c: ConnectionView): void }) {
  const [provider, setProvider] = useState('linear');
  const [name, setName] = useState('');
  const [collection, setCollection] = useState('');
  const [tag, setTag] = useState('');
  const [creds, setCreds] = useState<Record<string, string>>({});
  const [config, setConfig] = useState<Record<string, string>>({});
  const [interval, setSyncInterval] = useState('');
  const [extraConfig, setExtraConfig] = useState('');
  const [freeCreds, setFreeCreds] = useState('');
  const [created, setCreated] = useState<ConnectionView | null>(null);
  const create = useAction();
  const oauth = useAction();
  const spec = connectionProvider(provider)!;

  /** The config object: the provider's fields, the interval and any extra JSON. */
  function configObject() {
    const out: Record<string, unknown> = { ...jsonObject(extraConfig, 'Extra config'), ...filled(spec.config, config) };
    if (interval.trim()) out.sync_interval_minutes = Number(interval);
    return out;
  }

  async function submit() {
    setCreated(null);
    const c = await create.run(async () =>
      api<ConnectionView>('POST', '/v1/memory/connections', {
        body: {
          provider,
          name: name.trim() || null,
          collection: collection.trim(),
          container_tag: tag.trim() || null,
          config: configObject(),
          credentials: spec.freeCredentials ? jsonObject(freeCreds, 'Credentials') : filled(spec.credentials, creds),
        },
      }),
    );
    if (!c) return;
    setCreated(c);
    // Secrets do not linger in the form once the service has them.
    setCreds({});
    setFreeCreds('');
    onCreated(c);
  }

  async function startOAuth() {
    const res = await oauth.run(async () => {
      if (!collection.trim()) throw new ApiError(0, 'Name the collection the connection writes to first.');
      return api<{ authorize_url: string }>(
        'GET',
        `/v1/memory/connections/oauth/${provider}/start${query({ collection: collection.trim(), name: name.trim(), container_tag: tag.trim(), config: JSON.stringify(configObject()) })}`,
      );
    });
    // The provider's consent page; it sends the browser back to the dashboard with ?connection=.
    if (res) window.location.assign(res.authorize_url);
  }

  const field = (f: ConnectionField, values: Record<string, string>, set: (v: Record<string, string>) => void, prefix: string) => (
    <div className="field" key={`${prefix}-${f.name}`}>
      <label htmlFor={`${prefix}-${f.name}`}>
        {f.label}
        {!f.required && <span className="muted"> (optional)</span>}
      </label>
      <input
        id={`${prefix}-${f.name}`}
        type={f.secret ? 'password' : 'text'}
        required={f.required}
        autoComplete="off"
        value={values[f.name] ?? ''}
        onChange={(e) => set({ ...values, [f.name]: e.target.value })}
        aria-describedby={f.hint ? `${prefix}-${f.name}-hint` : undefined}
      />
      {f.hint && (
        <span id={`${prefix}-${f.name}-hint`} className="muted">
          {f.hint}
        </span>
      )}
    </div>
  );

  return (
    <section aria-labelledby="new-connection" className="card" style={{ marginBottom: '1rem' }}>
      <h2 id="new-connection" style={{ marginTop: 0 }}>New connection</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="field">
          <label htmlFor="conn-provider">Provider</label>
          <select
            id="conn-provider"
            value={provider}
            onChange={(e) => {
              setProvider(e.target.value);
              setCreds({});
              setConfig({});
              oauth.clearError();
              create.clearError();
            }}
          >
            {CONNECTION_PROVIDERS.map((p) => (
              <option key={p.provider} value={p.provider}>
                {p.label}
              </option>
            ))}
          </select>
        </div>
        <FileCollectionInput id="conn-collection" value={collection} onChange={setCollection} />
        <div className="grid">
          <div className="field">
            <label htmlFor="conn-name">
              Name <span className="muted">(optional)</span>
            </label>
            <input id="conn-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
          </div>
          <div className="field">
            <label htmlFor="conn-tag">
              Container tag <span className="muted">(optional)</span>
            </label>
            <input id="conn-tag" value={tag} onChange={(e) => setTag(e.target.value)} maxLength={256} />
          </div>
          {spec.syncs && (
            <div className="field">
              <label htmlFor="conn-interval">
                Sync every (minutes) <span className="muted">(default 60)</span>
              </label>
              <input id="conn-interval" type="number" min={1} step={1} value={interval} onChange={(e) => setSyncInterval(e.target.value)} />
            </div>
          )}
        </div>
        {spec.oauth && (
          <div className="row" style={{ marginBottom: '0.6rem' }}>
            <button type="button" disabled={oauth.busy} onClick={() => void startOAuth()}>
              Connect {spec.label} with OAuth
            </button>
            <span className="muted">or paste a token below.</span>
          </div>
        )}
        {oauth.busy && <Busy label="Asking for the consent page…" />}
        <ErrorNote error={oauth.error} />
        {spec.credentials.length > 0 && (
          <fieldset>
            <legend>Credentials</legend>
            {spec.credentials.map((f) => field(f, creds, setCreds, 'conn-cred'))}
          </fieldset>
        )}
        {spec.freeCredentials && (
          <div className="field">
            <label htmlFor="conn-free-creds">Credentials (JSON)</label>
            <textarea id="conn-free-creds" value={freeCreds} onChange={(e) => setFreeCreds(e.target.value)} placeholder='{"url": "postgres://…"}' />
          </div>
        )}
        {spec.config.length > 0 && (
          <fieldset>
            <legend>Config</legend>
            {spec.config.map((f) => field(f, config, setConfig, 'conn-config'))}
          </fieldset>
        )}
        <div className="field">
          <label htmlFor="conn-extra">
            Extra config (JSON) <span className="muted">(optional)</span>
          </label>
          <textarea id="conn-extra" value={extraConfig} onChange={(e) => setExtraConfig(e.target.value)} placeholder="{}" style={{ minHeight: '3rem' }} />
        </div>
        <button type="submit" className="primary" disabled={create.busy || !collection.trim()}>
          Create connection
        </button>
      </form>
      {create.busy && <Busy label="Creating…" />}
      <ErrorNote error={create.error} />
      {created && (
        <p className="ok" role="status">
          Connected {connectionProvider(created.provider)?.label ?? created.provider} to {created.collection}. {connectionProvider(created.provider)?.syncs ? 'It syncs within a minute, or press Sync now below.' : 'Your own job reads it; the service does not sync it.'}
        </p>
      )}
    </section>
  );
}
