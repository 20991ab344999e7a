import { useState, type FormEvent } from 'react';
import { rpc, type ApiOutput } from '../api.ts';
import { Bars, Busy, ErrorNote } from './ui.tsx';
import { useApi } from './use-api.ts';

type ReportHealthData = ApiOutput['hygiene']['health'];

/** Each count with what it means (the service's own definitions), so nobody has to look them up. */
const COUNTS: Array<[keyof ReportHealthData, string, (days: number) => string]> = [
  ['total', 'Total', () => 'Every memory'],
  ['current', 'Current', () => 'Neither superseded nor expired'],
  ['archived', 'Archived', () => 'Hidden from search, restorable'],
  ['pinned', 'Pinned', () => 'Never removed by dedup'],
  ['stale', 'Stale', (d) => `Not pinned or archived, not updated for ${d} days`],
  ['expired', 'Expired', () => 'Past their expiry time'],
  ['supersessions', 'Supersessions', () => 'Facts replaced by newer ones'],
  ['needs_attention', 'Needs attention', () => 'Stale + expired + supersessions'],
];

const JOBS: Array<[keyof ReportHealthData['jobs'], string]> = [
  ['failed_extractions', 'Failed remember extractions'],
  ['stuck_extractions', 'Stuck remember extractions'],
  ['failed_files', 'Failed files'],
  ['failed_proxy_stores', 'Chat proxy turns not stored'],
  ['stuck_files', 'Stuck files'],
];

function ReportCount({ label, value, note, warn }: { label: string; value: number; note: string; warn?: boolean }) {
  return (
    <div className="card">
      <dt>{label}</dt>
      <dd style={{ margin: 0 }}>
        <strong style={{ fontSize: '1.5rem' }}>{value.toLocaleString()}</strong>
        {warn && value > 0 && <span className="badge warn">check</span>}
        <div className="muted" style={{ fontSize: '0.85rem' }}>
          {note}
        </div>
      </dd>
    </div>
  );
}

/** The collection's counts, per-category breakdown and background jobs that need a person. */
export function ReportHealth({ collection }: { collection: string }) {
  const [days, setDays] = useState(90);
  const [draft, setDraft] = useState('90');
  const health = useApi(() => rpc.hygiene.health.query({ collection, stale_days: days }), [collection, days]);
  const h = health.data;

  function apply(e: FormEvent) {
    e.preventDefault();
    const n = Number(draft);
    if (Number.isInteger(n) && n >= 0) setDays(n);
  }

  return (
    <section aria-labelledby="report-health">
      <h2 id="report-health">Health</h2>
      <form onSubmit={apply} className="row" style={{ marginBottom: '0.6rem' }}>
        <label htmlFor="report-stale-days">Stale after (days)</label>
        <input id="report-stale-days" type="number" min={0} step={1} value={draft} onChange={(e) => setDraft(e.target.value)} style={{ width: '6rem' }} />
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={health.error} />
      {health.loading && !h && <Busy label="Reading the counts…" />}
      {h && !h.exists && <p className="muted">There is no collection named {collection} (yet): it is created by its first memory.</p>}
      {h && h.exists && (
        <>
          <dl className="grid" style={{ margin: 0 }}>
            {COUNTS.map(([k, label, note]) => (
              <ReportCount key={k} label={label} value={h[k] as number} note={note(days)} warn={k === 'needs_attention'} />
            ))}
          </dl>
          <h3>Categories</h3>
          {Object.keys(h.categories).length === 0 ? (
            <p className="muted">No memories yet.</p>
          ) : (
            <Bars
              items={Object.entries(h.categories)
                .map(([label, value]) => ({ label, value }))
                .sort((a, b) => b.value - a.value)}
            />
          )}
          <h3>Pipeline</h3>
          <p className="muted">Background work of this collection that failed or stopped moving (not counted in needs attention).</p>
          <dl className="grid" style={{ margin: 0 }}>
            {JOBS.map(([k, label]) => (
              <ReportCount
                key={k}
                label={label}
                value={h.jobs[k]}
                note={k.startsWith('stuck') ? 'No progress for over 15 minutes' : 'After their last try'}
                warn
              />
            ))}
          </dl>
        </>
      )}
    </section>
  );
}
