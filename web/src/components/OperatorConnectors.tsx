import { useState } from 'react';
import { rpc } from '../api.ts';
import { Bars, Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

const PERIODS: Array<[number, string]> = [
  [1, 'Last hour'],
  [24, 'Last 24 hours'],
  [168, 'Last 7 days'],
  [720, 'Last 30 days'],
  [2160, 'Last 90 days'],
];

/** Connector health across tenants (aggregates only): connections by status, and sync runs per provider. */
export function OperatorConnectors() {
  const [hours, setHours] = useState(24);
  const health = useApi(() => rpc.admin.connectors.query({ hours }), [hours]);
  const counts = useApi(() => rpc.admin.connectorsStatus.query(), []);
  const count = (s: string) => counts.data?.find((c) => c.status === s)?.n ?? 0;
  const providers = health.data?.providers ?? [];
  return (
    <section aria-labelledby="op-connectors">
      <h2 id="op-connectors">Connectors</h2>
      <ErrorNote error={counts.error} />
      {counts.data && (
        <div className="grid" style={{ marginBottom: '1rem' }} data-testid="connection-counts">
          {(['active', 'error', 'paused'] as const).map((s) => (
            <div key={s} className="card">
              <div className="muted">Connections {s === 'error' ? 'in error' : s}</div>
              <div style={{ fontSize: '1.6rem', fontVariantNumeric: 'tabular-nums' }}>{count(s)}</div>
            </div>
          ))}
        </div>
      )}
      <div className="field" style={{ display: 'flex', flexDirection: 'column', gap: '0.2rem', maxWidth: '16rem' }}>
        <label htmlFor="op-hours">Period</label>
        <select id="op-hours" value={hours} onChange={(e) => setHours(Number(e.target.value))}>
          {PERIODS.map(([h, label]) => (
            <option key={h} value={h}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <ErrorNote error={health.error} />
      {health.loading && <Busy label="Loading connector runs…" />}
      {health.data && providers.length === 0 && <p className="muted">No sync ran in this period.</p>}
      {providers.length > 0 && (
        <>
          <h3>Sync runs per provider</h3>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">Runs</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Last run</th>
                </tr>
              </thead>
              <tbody>
                {providers.map((p) => (
                  <tr key={p.provider} data-provider={p.provider}>
                    <td>{p.provider}</td>
                    <td>{p.runs}</td>
                    <td className={p.errors ? 'error' : undefined}>{p.errors}</td>
                    <td>{when(p.last_run)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="grid" style={{ gridTemplateColumns: 'repeat(auto-fit, minmax(280px, 1fr))', marginTop: '0.75rem' }}>
            <div className="card">
              <h3 style={{ marginTop: 0 }}>Runs</h3>
              <Bars items={providers.map((p) => ({ label: p.provider, value: p.runs }))} />
            </div>
            <div className="card">
              <h3 style={{ marginTop: 0 }}>Failed runs</h3>
              {providers.some((p) => p.errors) ? (
                <Bars items={providers.map((p) => ({ label: p.provider, value: p.errors }))} />
              ) : (
                <p className="muted">No sync failed in this period.</p>
              )}
            </div>
          </div>
        </>
      )}
    </section>
  );
}
