import type { ApiOutput } from '../api.ts';

/** The self-checks as system.status lists them, newest first. */
type StatusCheck = ApiOutput['system']['status']['recent_checks'][number];

/**
 * The recent self-checks as a strip of bars, oldest on the left: height is the database latency,
 * colour is the outcome. The same checks follow as a list for screen readers and exact figures.
 */
export function StatusChecks({ checks }: { checks: StatusCheck[] }) {
  if (!checks.length) return <p className="muted">No self-check has run yet: the service checks itself every minute.</p>;
  const oldestFirst = [...checks].reverse();
  const max = Math.max(1, ...checks.map((c) => c.latency_ms));
  const passed = checks.filter((c) => c.ok).length;
  return (
    <>
      <div
        role="img"
        aria-label={`${passed} of ${checks.length} recent checks passed`}
        style={{ display: 'flex', alignItems: 'flex-end', gap: 3, height: 56, padding: '4px 0', borderBottom: '1px solid var(--line)' }}
      >
        {oldestFirst.map((c) => (
          <span
            key={c.checked_at}
            title={`${new Date(c.checked_at).toLocaleString()}: ${c.ok ? 'passed' : 'failed'}, ${c.latency_ms} ms`}
            style={{
              flex: '1 1 0',
              maxWidth: 24,
              height: `${Math.max(12, (c.latency_ms / max) * 100)}%`,
              background: c.ok ? 'var(--ok)' : 'var(--danger)',
              borderRadius: 2,
            }}
          />
        ))}
      </div>
      <p className="muted" style={{ fontSize: '0.85rem' }}>
        {passed} of {checks.length} recent checks passed · bar height is the database latency
      </p>
      <details>
        <summary>Each check</summary>
        <ol style={{ paddingLeft: '1.2rem' }}>
          {checks.map((c) => (
            <li key={c.checked_at}>
              {new Date(c.checked_at).toLocaleString()}: <span className={c.ok ? 'ok' : 'error'}>{c.ok ? 'passed' : 'failed'}</span>, {c.latency_ms} ms
            </li>
          ))}
        </ol>
      </details>
    </>
  );
}
