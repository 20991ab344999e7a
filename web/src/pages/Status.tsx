import { useEffect } from 'react';
import { Link } from 'react-router';
import { rpc, type ApiOutput } from '../api.ts';
import { StatusChecks } from '../components/StatusChecks.tsx';
import { Busy, ErrorNote, when } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** One component's check (database, queue or file store); the file store's is null when no check ran lately. */
type Component = ApiOutput['system']['status']['components']['database'];

const HEADINGS = { operational: 'All systems operational', degraded: 'Degraded: some background work or file storage is failing', down: 'The service is down' };
const COLOURS = { operational: 'var(--ok)', degraded: '#8a5300', down: 'var(--danger)' };

function componentLine(name: string, c: Component | null, extra = '') {
  if (!c) return `${name}: not checked yet`;
  return `${name}: ${c.ok ? 'passing' : 'failing'}, ${c.latency_ms} ms${extra}`;
}

const REFRESH_MS = 30_000;

/** Once per page load, however often the page is shown. */
let beaconSent = false;

/** The cookieless pageview beacon (procedures/pulse-beacon.ts): a path and a referrer, nothing else. */
function sendStatusBeacon() {
  if (beaconSent) return;
  beaconSent = true;
  navigator.sendBeacon('/v1/pulse', JSON.stringify({ path: '/status', referrer: document.referrer || null }));
}

/** The public status page: works signed out, outside the signed-in frame. */
export function Status() {
  const { me } = useSession();
  const report = useApi(() => rpc.system.status.query(), []);
  const { reload } = report;
  useEffect(() => {
    const timer = setInterval(reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  useEffect(sendStatusBeacon, []);
  const r = report.data;
  const state = r?.status ?? 'down';
  return (
    <div className="layout">
      <header>
        <Link className="brand" to="/">
          orgmem
        </Link>
        <nav aria-label="Main">
          <span className="muted">Service status</span>
        </nav>
        {me ? <Link to="/collections">Dashboard</Link> : <Link to="/">Sign in</Link>}
      </header>
      <main>
        <h1>Service status</h1>
        {report.loading && !r && <Busy label="Checking…" />}
        {/* Not reaching the service at all is its own kind of status. */}
        <ErrorNote error={report.error} />
        {r && (
          <>
            <section className="card" aria-labelledby="state" style={{ marginBottom: '1rem', borderLeft: `6px solid ${COLOURS[state]}` }}>
              <h2
                id="state"
                style={{ marginTop: 0, color: COLOURS[state] }}
                className={state === 'operational' ? 'ok' : state === 'down' ? 'error' : undefined}
                data-testid="status-state"
              >
                {HEADINGS[state]}
              </h2>
              <p className="muted" style={{ margin: 0 }}>
                Checked {when(r.checked_at)} · refreshes every 30 seconds
              </p>
              <ul className="muted" style={{ margin: '0.5rem 0 0', paddingLeft: '1.2rem' }} data-testid="status-components">
                <li>{componentLine('Database', r.components.database)}</li>
                <li>
                  {componentLine(
                    'Job queue',
                    r.components.queue,
                    r.components.queue.lag_ms === null ? '' : `, oldest waiting job ${Math.round(r.components.queue.lag_ms / 1000)} s`,
                  )}
                </li>
                <li>{componentLine('File storage', r.components.blobs, r.components.blobs ? `, checked ${when(r.components.blobs.checked_at)}` : '')}</li>
              </ul>
            </section>
            <div className="grid" style={{ marginBottom: '1rem', gridTemplateColumns: 'repeat(auto-fit, minmax(240px, 1fr))' }}>
              <section className="card" aria-labelledby="uptime">
                <h2 id="uptime" style={{ marginTop: 0 }}>
                  Uptime, last 24 hours
                </h2>
                <p style={{ fontSize: '2rem', margin: 0, fontVariantNumeric: 'tabular-nums' }} data-testid="uptime">
                  {r.uptime_24h === null ? '—' : `${r.uptime_24h}%`}
                </p>
                <p className="muted" style={{ margin: 0 }}>
                  {r.uptime_24h === null
                    ? 'No self-check recorded yet.'
                    : 'Share of the minute self-checks that passed (database, job queue and file storage all passing).'}
                </p>
              </section>
              <section className="card" aria-labelledby="latency">
                <h2 id="latency" style={{ marginTop: 0 }}>
                  Database latency
                </h2>
                <p style={{ fontSize: '2rem', margin: 0, fontVariantNumeric: 'tabular-nums' }}>{r.database_latency_ms} ms</p>
                <p className="muted" style={{ margin: 0 }}>
                  One round trip, measured for this answer.
                </p>
              </section>
            </div>
            <section aria-labelledby="checks">
              <h2 id="checks">Recent checks</h2>
              <StatusChecks checks={r.recent_checks} />
            </section>
          </>
        )}
      </main>
    </div>
  );
}
