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
 * The account's audit log (admin tenants only), newest first. A 403 means the tenant is not an
 * admin: the section is simply not there, with no error.
 */
export function UsageAudit() {
  const log = useApi(
    () =>
      rpc.admin.audit.mutate({ days: 30, limit: 200 }).then(
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
          <table aria-label="Audit log">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {log.data.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.at)}</td>
                  <td>{e.actor.label ?? <span className="muted">—</span>}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{e.target}</td>
                  <td>
                    <code className="muted">{auditDetail(e.detail)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
