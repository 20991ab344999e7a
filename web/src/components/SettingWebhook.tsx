import { useState } from 'react';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { KeyShownOnce } from './KeyShownOnce.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/** The outbound webhook: its URL, and its signing secret shown once after each save. */
export function SettingWebhook() {
  const { canAdmin } = useSession();
  // None configured: the API answers nulls, shown as no webhook.
  const hook = useApi(async () => {
    const got = await rpc.webhook.get.query();
    return got.url === null ? null : got;
  }, []);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const { busy, error, run } = useAction();

  async function save() {
    const saved = await run(() => rpc.webhook.put.mutate({ url: url.trim() }));
    if (!saved) return;
    setSecret(saved.secret);
    setUrl('');
    hook.reload();
  }
  async function remove() {
    const done = await run(async () => {
      await rpc.webhook.delete.mutate();
      return true;
    });
    if (done) {
      setSecret(null);
      hook.reload();
    }
  }

  return (
    <section className="card" aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook</h2>
      <p className="muted">
        The service POSTs memory.created, memory.updated and memory.deleted events to this URL, signed in the X-Service-Signature header (sha256 HMAC of the
        body with the signing secret).
      </p>
      <ErrorNote error={hook.error} />
      {hook.loading && hook.data === undefined && <Busy label="Loading…" />}
      {hook.data === null && <p>No webhook is configured.</p>}
      {hook.data && (
        <p>
          Sending to <code>{hook.data.url}</code> <span className="muted">since {when(hook.data.created_at)}</span>
        </p>
      )}
      {secret && <KeyShownOnce id="webhook-secret" label="Signing secret" what="the signing secret" value={secret} onDone={() => setSecret(null)} />}
      {canAdmin && (
        <>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <div className="field">
              <label htmlFor="webhook-url">Webhook URL</label>
              <input id="webhook-url" type="url" placeholder="https://example.com/hooks/orgmem" value={url} onChange={(e) => setUrl(e.target.value)} required />
            </div>
            <div className="row">
              <button type="submit" className="primary" disabled={busy || !url.trim()}>
                {hook.data ? 'Replace webhook' : 'Save webhook'}
              </button>
              {hook.data && (
                <ConfirmButton label="Remove webhook" title="Remove the webhook?" onConfirm={remove} disabled={busy}>
                  <p>Events stop at once. Saving a URL again makes a new signing secret.</p>
                </ConfirmButton>
              )}
            </div>
          </form>
          {hook.data && <p className="muted">Saving a URL makes a new signing secret; the old one stops being used.</p>}
        </>
      )}
      {busy && <Busy label="Saving…" />}
      <ErrorNote error={error} />
    </section>
  );
}
