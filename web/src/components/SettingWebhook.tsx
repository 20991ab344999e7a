import { useState } from 'react';
import { rpc, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { KeyShownOnce } from './KeyShownOnce.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

type Hook = ApiOutput['webhook']['get'];

/** What each state of the webhook means to the reader (docs/webhooks.md, "Delivery"). */
const STATE_TEXT: Record<Hook['state'], string> = {
  none: 'No webhook is configured.',
  active: 'Delivering',
  backing_off: 'Backing off after failed tries',
  suspended: 'Suspended',
};

/**
 * The outbound webhook: its URL, its signing secret shown once after each save, how deliveries
 * go (state, failures, the suspension's reason, waiting events) and its dead letters, with
 * resume, test and replay for an admin key.
 */
export function SettingWebhook() {
  const { canAdmin } = useSession();
  const hook = useApi(() => rpc.webhook.get.query(), []);
  const dead = useApi(async () => (canAdmin && hook.data && hook.data.dead_letters > 0 ? rpc.webhook.deadLetters.query({ limit: 20 }) : null), [hook.data]);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [tested, setTested] = useState<ApiOutput['webhook']['test'] | null>(null);
  const { busy, error, run } = useAction();
  const configured = hook.data && hook.data.state !== 'none' ? hook.data : null;

  async function act<T>(fn: () => Promise<T>) {
    const done = await run(fn);
    if (done !== undefined) hook.reload();
    return done;
  }
  async function save() {
    const saved = await act(() => rpc.webhook.put.mutate({ url: url.trim() }));
    if (!saved) return;
    setSecret(saved.secret);
    setUrl('');
  }
  async function remove() {
    if (await act(() => rpc.webhook.delete.mutate().then(() => true))) setSecret(null);
  }

  return (
    <section className="card" aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook</h2>
      <p className="muted">
        The service POSTs memory.created, memory.updated, memory.retracted and memory.deleted events to this URL, one at a time, signed in the
        X-Service-Signature header (sha256 HMAC of the body with the signing secret).
      </p>
      <ErrorNote error={hook.error} />
      {hook.loading && hook.data === undefined && <Busy label="Loading…" />}
      {hook.data && !configured && <p>{STATE_TEXT.none}</p>}
      {configured && (
        <>
          <p>
            Sending to <code className="wrap">{configured.url}</code> <span className="muted">since {when(configured.created_at)}</span>
          </p>
          <dl className="grid" aria-label="Deliveries">
            <div>
              <dt>State</dt>
              <dd>
                <span className={configured.state === 'active' ? 'badge' : 'badge warn'}>{STATE_TEXT[configured.state]}</span>
                {configured.state === 'backing_off' && <span className="muted"> until {when(configured.next_try_at)}</span>}
              </dd>
            </div>
            {configured.suspended_reason && (
              <div>
                <dt>Why</dt>
                <dd className="wrap">{configured.suspended_reason}</dd>
              </div>
            )}
            <div>
              <dt>Waiting</dt>
              <dd>{configured.pending.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Dead letters</dt>
              <dd>{configured.dead_letters.toLocaleString()}</dd>
            </div>
            <div>
              <dt>Last delivered</dt>
              <dd>{when(configured.last_delivered_at)}</dd>
            </div>
            {configured.last_error && (
              <div>
                <dt>Last failure</dt>
                <dd className="wrap">
                  {configured.last_error} <span className="muted">({when(configured.last_error_at)})</span>
                </dd>
              </div>
            )}
          </dl>
          {canAdmin && (
            <div className="row">
              {configured.state !== 'active' && (
                <button type="button" className="primary" disabled={busy} onClick={() => void act(() => rpc.webhook.resume.mutate())}>
                  Resume deliveries
                </button>
              )}
              <button type="button" disabled={busy} onClick={() => void act(() => rpc.webhook.test.mutate()).then((r) => r && setTested(r))}>
                Send a test event
              </button>
              {configured.dead_letters > 0 && configured.state !== 'suspended' && (
                <button type="button" disabled={busy} onClick={() => void act(() => rpc.webhook.replay.mutate({}))}>
                  Replay dead letters
                </button>
              )}
            </div>
          )}
          {tested && (
            <p role="status" className={tested.delivered ? 'ok' : 'error'}>
              {tested.delivered
                ? `The test event was delivered (${tested.status})${tested.resumed ? '; deliveries resumed' : ''}.`
                : `The test event failed: ${tested.error}.`}
            </p>
          )}
          {dead.data && dead.data.events.length > 0 && (
            <>
              <h3 id="dead-letters-title">
                Dead letters{' '}
                <span className="muted">
                  (the newest {dead.data.events.length} of {dead.data.total.toLocaleString()})
                </span>
              </h3>
              <ul aria-labelledby="dead-letters-title">
                {dead.data.events.map((e) => (
                  <li key={e.id}>
                    <strong>{e.type}</strong>{' '}
                    <span className="muted">
                      {e.attempts} {e.attempts === 1 ? 'try' : 'tries'}, given up {when(e.dead_at)}
                    </span>
                    <br />
                    <span className="wrap">{e.last_error}</span>
                    <br />
                    <code className="muted wrap">{e.id}</code>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
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
                {configured ? 'Replace webhook' : 'Save webhook'}
              </button>
              {configured && (
                <ConfirmButton label="Remove webhook" title="Remove the webhook?" onConfirm={remove} disabled={busy}>
                  <p>Events stop at once; waiting events and dead letters are dropped. Saving a URL again makes a new signing secret.</p>
                </ConfirmButton>
              )}
            </div>
          </form>
          {configured && <p className="muted">Saving a URL makes a new signing secret and resumes deliveries; the old secret stops being used.</p>}
        </>
      )}
      {busy && <Busy label="Saving…" />}
      <ErrorNote error={error} />
    </section>
  );
}
