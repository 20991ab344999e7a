import { Link } from 'react-router';
import { rpc } from '../api.ts';
import { SettingFacts } from '../components/SettingFacts.tsx';
import { UsageAudit } from '../components/UsageAudit.tsx';
import { Bars, Busy, ErrorNote } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** Bytes in the largest unit that keeps the number readable. */
function usageBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toLocaleString(undefined, { maximumFractionDigits: i ? 1 : 0 })} ${units[i]}`;
}

/** "12 of 10,000" against a limit, or the number alone when there is none. */
const ofLimit = (value: string, limit: string | null) => (limit === null ? value : `${value} of ${limit}`);

/** Most collections a chart shows; the rest are summed up in one line. */
const CHART_MAX = 15;

/** The account's usage and limits, as numbers and charts; the way to the ledger for admin keys; the audit log for admin tenants. */
export function Usage() {
  const { me } = useSession();
  const stats = useApi(() => rpc.admin.stats.query(), []);
  const collections = useApi(() => rpc.collections.list.query(), []);
  const s = stats.data;
  const limits = me?.limits;
  const perCollection = [...(collections.data ?? [])].sort((a, b) => b.memory_count - a.memory_count);
  const shown = perCollection.slice(0, CHART_MAX).map((c) => ({ label: c.name, value: c.memory_count }));
  const rest = perCollection.slice(CHART_MAX);
  if (rest.length) shown.push({ label: `${rest.length} more`, value: rest.reduce((n, c) => n + c.memory_count, 0) });

  return (
    <>
      <h1>Usage</h1>
      <ErrorNote error={stats.error} />
      {stats.loading && !s && <Busy label="Loading usage…" />}
      {s && limits && (
        <section aria-labelledby="usage-totals">
          <h2 id="usage-totals">This account</h2>
          <SettingFacts
            items={[
              ['Memories', ofLimit(s.memories.toLocaleString(), limits.max_memories?.toLocaleString() ?? null)],
              ['Collections', ofLimit(s.collections.toLocaleString(), limits.max_collections?.toLocaleString() ?? null)],
              ['Stored', ofLimit(usageBytes(s.storage_bytes), limits.max_storage_bytes === null ? null : usageBytes(limits.max_storage_bytes))],
              ['Added in 7 days', s.added_7d.toLocaleString()],
              ['Added in 30 days', s.added_30d.toLocaleString()],
            ]}
          />
          <h2>Memories added</h2>
          <Bars
            items={[
              { label: 'Last 7 days', value: s.added_7d },
              { label: 'Last 30 days', value: s.added_30d },
            ]}
          />
        </section>
      )}

      <h2>Memories per collection</h2>
      <ErrorNote error={collections.error} />
      {collections.loading && !collections.data && <Busy label="Loading collections…" />}
      {collections.data && (shown.length ? <Bars items={shown} /> : <p className="muted">No collections yet.</p>)}

      {s && (
        <>
          <h2>Background work</h2>
          <SettingFacts
            items={[
              ['Failed extractions', s.jobs.failed_extractions.toLocaleString()],
              ['Stuck extractions', s.jobs.stuck_extractions.toLocaleString()],
              ['Failed files', s.jobs.failed_files.toLocaleString()],
              ['Chat proxy turns not stored', s.jobs.failed_proxy_stores.toLocaleString()],
              ['Stuck files', s.jobs.stuck_files.toLocaleString()],
            ]}
          />
        </>
      )}

      {limits && (
        <>
          <h2>Limits</h2>
          <p className="muted">
            Tier <strong>{me.tier}</strong>. Limits are set by the operator of this service.
          </p>
          <SettingFacts
            items={[
              ['Requests per minute', limits.rate_limit_per_minute.toLocaleString()],
              ['Memories', limits.max_memories?.toLocaleString() ?? 'No limit'],
              ['Collections', limits.max_collections?.toLocaleString() ?? 'No limit'],
              ['Storage', limits.max_storage_bytes === null ? 'No limit' : usageBytes(limits.max_storage_bytes)],
            ]}
          />
        </>
      )}

      {me?.key.role === 'admin' && (
        <section aria-labelledby="usage-ledger">
          <h2 id="usage-ledger">What agents were given</h2>
          <p>
            <Link to="/usage/ledger">The ledger</Link> <span className="muted">records which memories were handed to which agent, when and how.</span>
          </p>
        </section>
      )}

      {me?.is_admin && <UsageAudit />}
    </>
  );
}
