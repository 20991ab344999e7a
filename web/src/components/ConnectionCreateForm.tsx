import { useState } from 'react';
import { ApiError, rpc, type ApiInput, type ApiOutput } from '../api.ts';

type ConnectionView = ApiOutput['connections']['create'];
type ProviderView = ApiOutput['connections']['providers'][number];
import { FileCollectionInput } from './FileCollectionInput.tsx';
import { connectionFields, takesFreeJson, useConnectionProviders, type ConnectionField } from './ConnectionProviders.ts';
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

/** The fields typed in, numbers as numbers; empty ones left out. */
const filled = (fields: ConnectionField[], values: Record<string, string>) =>
  Object.fromEntries(
    fields.flatMap((f) => {
      const v = values[f.name]?.trim();
      return v ? [[f.name, f.numeric ? Number(v) : v]] : [];
    }),
  );

/** Connect a provider to a collection: with a token pasted here, or through the provider's OAuth consent. */
export function ConnectionCreateForm({ onCreated }: { onCreated(c: ConnectionView): void }) {
  const providers = useConnectionProviders();
  if (!providers.data) return providers.error ? <ErrorNote error={providers.error} /> : <Busy label="Loading providers…" />;
  return <ConnectionForm providers={providers.data} onCreated={onCreated} />;
}

function ConnectionForm({ providers, onCreated }: { providers: ProviderView[]; onCreated(c: ConnectionView): void }) {
  const [provider, setProvider] = useState(providers[0]!.provider);
  const [name, setName] = useState('');
  const [collection, setCollection] = useState('');
  const [tag, setTag] = useState('');
  const [creds, setCreds] = useState<Record<string, string>>({});
  const [config, setConfig] = useState<Record<string, string>>({});
  const [extraConfig, setExtraConfig] = useState('');
  const [freeCreds, setFreeCreds] = useState('');
  const [created, setCreated] = useState<ConnectionView | null>(null);
  const create = useAction();
  const oauth = useAction();
  const spec = providers.find((p) => p.provider === provider)!;
  const credentialFields = connectionFields(spec.credentials);
  const configFields = connectionFields(spec.config);
  const createdSpec = created && providers.find((p) => p.provider === created.provider);

  /** The config object: the provider's fields and any extra JSON. */
  const configObject = () => ({ ...jsonObject(extraConfig, 'Extra config'), ...filled(configFields, config) });

  async function submit() {
    setCreated(null);
    const c = await create.run(async () =>
      rpc.connections.create.mutate({
        provider,
        name: name.trim() || null,
        collection: collection.trim(),
        container_tag: tag.trim() || null,
        config: configObject(),
        credentials: takesFreeJson(spec.credentials) ? jsonObject(freeCreds, 'Credentials') : filled(credentialFields, creds),
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
      return rpc.connections.oauthStart.mutate({
        provider: provider as ApiInput['connections']['oauthStart']['provider'],
        collection: collection.trim(),
        name: name.trim() || undefined,
        container_tag: tag.trim() || null,
        config: JSON.stringify(configObject()),
      });
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
        type={f.secret ? 'password' : f.numeric ? 'number' : 'text'}
        min={f.min}
        step={f.numeric ? 1 : undefined}
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
      <h2 id="new-connection" style={{ marginTop: 0 }}>
        New connection
      </h2>
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
              setProvider(e.target.value as ProviderView['provider']);
              setCreds({});
              setConfig({});
              oauth.clearError();
              create.clearError();
            }}
          >
            {providers.map((p) => (
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
        </div>
        {spec.oauth === 'not_configured' && (
          <p className="muted" data-testid="oauth-unavailable">
            OAuth for {spec.label} is not configured on this server: paste a token below.
          </p>
        )}
        {spec.oauth === 'available' && (
          <div className="row" style={{ marginBottom: '0.6rem' }}>
            <button type="button" disabled={oauth.busy} onClick={() => void startOAuth()}>
              Connect {spec.label} with OAuth
            </button>
            <span className="muted">or paste a token below.</span>
          </div>
        )}
        {oauth.busy && <Busy label="Asking for the consent page…" />}
        <ErrorNote error={oauth.error} />
        {credentialFields.length > 0 && (
          <fieldset>
            <legend>Credentials</legend>
            {credentialFields.map((f) => field(f, creds, setCreds, 'conn-cred'))}
          </fieldset>
        )}
        {takesFreeJson(spec.credentials) && (
          <div className="field">
            <label htmlFor="conn-free-creds">Credentials (JSON)</label>
            <textarea id="conn-free-creds" value={freeCreds} onChange={(e) => setFreeCreds(e.target.value)} placeholder='{"key": "value"}' />
          </div>
        )}
        {configFields.length > 0 && (
          <fieldset>
            <legend>Config</legend>
            {configFields.map((f) => field(f, config, setConfig, 'conn-config'))}
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
          Connected {createdSpec?.label ?? created.provider} to {created.collection}.{' '}
          {createdSpec?.synced ? 'It syncs within a minute, or press Sync now below.' : 'Your own job reads it; the service does not sync it.'}
        </p>
      )}
    </section>
  );
}
