import { useState, type CSSProperties, type ReactNode } from 'react';
import { Link } from 'react-router';
import { rpc, seg, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { useConnectionProviders } from './ConnectionProviders.ts';
import { Busy, ConfirmButton, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

type ConnectionView = ApiOutput['connections']['list'][number];
type SyncResult = ApiOutput['connections']['sync'];

const BADGE_STYLE: Record<string, CSSProperties | undefined> = {
  active: { background: '#e3f4ea', color: 'var(--ok)' },
  error: { background: '#fdecea', color: 'var(--danger)' },
};

/** active / error / paused, in words and colour. */
export function ConnectionStatusBadge({ status }: { status: string }) {
  return (
    <span className={status === 'paused' ? 'badge warn' : 'badge'} style={BADGE_STYLE[status]} data-status={status}>
      {status}
    </span>
  );
}

/** One connection: where it reads from and to, how its syncs went, and its actions. */
export function ConnectionCard({ c, onChanged }: { c: ConnectionView; onChanged(): void }) {
  const { canWrite } = useSession();
  const spec = useConnectionProviders().data?.find((p) => p.provider === c.provider);
  const [showRuns, setShowRuns] = useState(false);
  const [synced, setSynced] = useState<SyncResult | null>(null);
  const [runsTick, setRunsTick] = useState(0);
  const sync = useAction();
  const remove = useAction();
  const title = `conn-${c.id}`;

  async function syncNow() {
    setSynced(null);
    const res = await sync.run(() => rpc.connections.sync.mutate({ id: c.id }));
    if (res) setSynced(res);
    setRunsTick((t) => t + 1);
    onChanged();
  }

  return (
    <article className="card" aria-labelledby={title} style={{ marginBottom: '0.75rem' }}>
      <h3 id={title} style={{ margin: '0 0 0.4rem' }}>
        {c.name ?? spec?.label ?? c.provider} <ConnectionStatusBadge status={c.status} />
      </h3>
      <dl className="grid" style={{ margin: 0 }}>
        <ConnectionFact term="Provider" value={spec?.label ?? c.provider} />
        <ConnectionFact term="Collection" value={<Link to={`/collections/${seg(c.collection)}`}>{c.collection}</Link>} />
        {c.container_tag && <ConnectionFact term="Container tag" value={c.container_tag} />}
        <ConnectionFact term="Last sync" value={when(c.last_sync_at)} />
        <ConnectionFact term="Cursor" value={c.cursor ?? '—'} />
        <ConnectionFact term="Failures in a row" value={String(c.consecutive_failures)} />
      </dl>
      {c.last_error && (
        <p className="error" data-testid="last-error">
          Last error: {c.last_error}
        </p>
      )}
      {c.status === 'paused' && <p className="muted">Paused after 5 failed syncs in a row: the scheduler skips it until a manual sync succeeds.</p>}
      {spec && !spec.synced && <p className="muted">The service does not sync this provider: your own job reads the connection.</p>}
      <div className="row">
        {canWrite && spec?.synced && (
          <button type="button" className="primary" disabled={sync.busy} onClick={() => void syncNow()}>
            Sync now
          </button>
        )}
        <button type="button" aria-expanded={showRuns} aria-controls={`${title}-runs`} onClick={() => setShowRuns((s) => !s)}>
          {showRuns ? 'Hide runs' : 'Runs'}
        </button>
        {canWrite && (
          <ConfirmButton
            label="Delete"
            title="Delete this connection?"
            confirmLabel="Delete connection"
            onConfirm={async () => {
              const ok = await remove.run(() => rpc.connections.delete.mutate({ id: c.id }));
              if (ok !== undefined) onChanged();
            }}
          >
            <p>
              The {spec?.label ?? c.provider} connection {c.name ? `“${c.name}” ` : ''}and its runs are removed. The memories it synced stay in {c.collection}.
            </p>
          </ConfirmButton>
        )}
      </div>
      {sync.busy && <Busy label="Syncing…" />}
      <ErrorNote error={sync.error ?? remove.error} />
      {synced && (
        <p role="status" className={synced.status === 'active' ? 'ok' : 'error'} data-testid="sync-result">
          Synced {synced.synced} {synced.synced === 1 ? 'memory' : 'memories'} · status {synced.status}
          {synced.cursor ? ` · cursor ${synced.cursor}` : ''}
          {synced.last_error ? ` · ${synced.last_error}` : ''}
        </p>
      )}
      {showRuns && <ConnectionRuns id={c.id} anchor={`${title}-runs`} tick={runsTick} />}
    </article>
  );
}

function ConnectionFact({ term, value }: { term: string; value: ReactNode }) {
  return (
    <div>
      <dt className="muted" style={{ fontSize: '0.85rem' }}>
        {term}
      </dt>
      <dd style={{ margin: 0, overflowWrap: 'anywhere' }}>{value}</dd>
    </div>
  );
}

/** The connection's sync runs, newest first (as the service lists them). */
export function ConnectionRuns({ id, anchor, tick }: { id: string; anchor: string; tick: number }) {
  const runs = useApi(() => rpc.connections.runs.query({ id, limit: 20 }), [id, tick]);
  return (
    <div id={anchor}>
      <h4 style={{ margin: '0.8rem 0 0.3rem' }}>Runs</h4>
      <ErrorNote error={runs.error} />
      {runs.loading && !runs.data && <Busy label="Loading runs…" />}
      {runs.data && runs.data.length === 0 && <p className="muted">No sync has run yet.</p>}
      {runs.data && runs.data.length > 0 && (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Result</th>
                <th scope="col">Synced</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.map((r) => (
                <tr key={r.id}>
                  <td>{when(r.created_at)}</td>
                  <td className={r.status === 'success' ? 'ok' : 'error'}>{r.status}</td>
                  <td>{r.synced_count}</td>
                  <td>{r.error ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
