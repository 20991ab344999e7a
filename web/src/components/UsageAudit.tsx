import type { ReactNode } from 'react';
import { apiError, rpc, type ApiOutput } from '../api.ts';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/** The caller's own log lists its entries; another tenant's (asked by tenant_id) is summarised per day. */
type AuditEntry = Extract<ApiOutput['admin']['audit'][number], { id: string }>;

/** `key=value` pairs separated by spaces, so that a long detail wraps in its cell. */
const auditDetail = (detail: Record<string, unknown>) =>
  Object.entries(detail)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');

/**
 * The table's columns with their share of its width (fixed, so that a long detail wraps in its
 * own column rather than squeeze the others); on a phone each row is a block and each cell is
 * labelled with its column's name (styles.css).
 */
const COLUMNS: Array<[string, string, (e: AuditEntry) => ReactNode]> = [
  ['When', '14%', (e) => when(e.at)],
  ['Who', '11%', (e) => e.actor.label ?? <span className="muted">—</span>],
  ['Action', '16%', (e) => <code>{e.action}</code>],
  ['Target', '19%', (e) => e.target],
  ['Detail', '40%', (e) => <code className="muted">{auditDetail(e.detail)}</code>],
];

/**
 * The account's audit log (admin tenants only), newest first. A 403 means the tenant is not an
 * admin: the section is simply not there, with no error.
 */
export function UsageAudit() {
  const log = useApi(
    () =>
      rpc.admin.audit.query({ days: 30, limit: 200 }).then(
        (rows) => rows.flatMap((r): AuditEntry[] => ('id' in r ? [r] : [])),
        (err: unknown) => {
          if (apiError(err).status === 403) return null;
          throw err;
        },
      ),
    [],
  );
  if (log.data === null) return null;
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <p className="muted">Writes, access-control and account changes of the last 30 days, newest first (at most 200).</p>
      <ErrorNote error={log.error} />
      {log.loading && !log.data && <Busy label="Loading the audit log…" />}
      {log.data && log.data.length === 0 && <p>No entries.</p>}
      {log.data && log.data.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Audit log" className="audit">
            <thead>
              <tr>
                {COLUMNS.map(([label, width]) => (
                  <th key={label} scope="col" style={{ width }}>
                    {label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {log.data.map((e) => (
                <tr key={e.id}>
                  {COLUMNS.map(([label, , cell]) => (
                    <td key={label} data-label={label}>
                      {cell(e)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
