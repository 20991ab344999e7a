import { useEffect, useState } from 'react';
import { rpc, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { SettingFacts } from './SettingFacts.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

const SOURCES: Record<ApiOutput['extraction']['getConfig']['source'], string> = {
  tenant: 'your own endpoint (below)',
  server: "the server's configured endpoint",
  platform: 'the platform default',
  none: 'no LLM: heuristics only',
};

/** The account's own OpenAI-compatible extraction endpoint; saving runs a live self-test first. */
export function SettingExtraction() {
  const { canAdmin } = useSession();
  const config = useApi(() => rpc.extraction.getConfig.query(), []);
  const [baseUrl, setBaseUrl] = useState('');
  const [model, setModel] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();

  // The form starts from the saved endpoint (the key is never returned, so it starts empty).
  const c = config.data;
  useEffect(() => {
    if (!c?.configured) return;
    setBaseUrl(c.base_url ?? '');
    setModel(c.model ?? '');
  }, [c]);

  async function save() {
    setSaved(false);
    const result = await run(() =>
      rpc.extraction.putConfig.mutate({ provider: 'custom', base_url: baseUrl.trim(), model: model.trim(), api_key: apiKey || null }),
    );
    if (!result) return;
    setApiKey('');
    setSaved(true);
    config.reload();
  }
  async function remove() {
    setSaved(false);
    const done = await run(async () => {
      await rpc.extraction.deleteConfig.mutate();
      return true;
    });
    if (done) {
      setBaseUrl('');
      setModel('');
      config.reload();
    }
  }

  return (
    <section className="card" aria-labelledby="extraction-title">
      <h2 id="extraction-title">Extraction LLM</h2>
      <p className="muted">
        Remember turns text into facts with an LLM. Use your own OpenAI-compatible endpoint for it: calls to it never count against the spend cap. The API key
        is stored encrypted and never shown again.
      </p>
      <ErrorNote error={config.error} />
      {config.loading && !c && <Busy label="Loading…" />}
      {c && (
        <SettingFacts
          items={[
            ['Extraction uses', SOURCES[c.source]],
            c.configured && ['Base URL', <code>{c.base_url}</code>],
            c.configured && ['Model', c.model],
            c.configured && ['API key', c.api_key_set ? 'set (hidden)' : 'none'],
            c.configured && ['Updated', when(c.updated_at)],
          ]}
        />
      )}
      {canAdmin && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save();
          }}
        >
          <div className="field">
            <label htmlFor="extraction-base-url">Base URL</label>
            <input
              id="extraction-base-url"
              type="url"
              placeholder="https://api.openai.com/v1"
              value={baseUrl}
              onChange={(e) => setBaseUrl(e.target.value)}
              required
            />
          </div>
          <div className="field">
            <label htmlFor="extraction-model">Model</label>
            <input id="extraction-model" placeholder="gpt-4o-mini" value={model} onChange={(e) => setModel(e.target.value)} required />
          </div>
          <div className="field">
            <label htmlFor="extraction-api-key">API key</label>
            <input id="extraction-api-key" type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
            <span className="muted">Write-only. Leave empty for an endpoint without keys; saving replaces the stored key.</span>
          </div>
          <div className="row">
            <button type="submit" className="primary" disabled={busy || !baseUrl.trim() || !model.trim()}>
              Test and save
            </button>
            {c?.configured && (
              <ConfirmButton label="Remove config" title="Remove your extraction config?" onConfirm={remove} disabled={busy}>
                <p>Extraction goes back to the server's endpoint or the platform default. The stored API key is deleted.</p>
              </ConfirmButton>
            )}
          </div>
        </form>
      )}
      {busy && <Busy label="Testing the endpoint (one live completion)…" />}
      {saved && (
        <p className="ok" role="status">
          The endpoint passed its self-test and is saved.
        </p>
      )}
      <ErrorNote error={error} />
    </section>
  );
}
