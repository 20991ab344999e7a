import { apiError, rpc } from '../api.ts';
import { Bars, ErrorNote } from './ui.tsx';
import { useApi } from './use-api.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

const isObject = (v: Json): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);
const cell = (v: Json | undefined) =>
  v === undefined || v === null ? '—' : typeof v === 'object' ? JSON.stringify(v) : typeof v === 'number' ? v.toLocaleString() : String(v);

/**
 * The process metrics (admin.metrics), drawn generically so that a field the service adds shows
 * without a change here: number maps as bars, rows as tables. A server that answers 404 for them
 * gets no section at all.
 */
export function OperatorMetrics() {
  const metrics = useApi(
    () =>
      rpc.admin.metrics.query().then(
        (m): JsonObject => m,
        (err: unknown) => {
          if (apiError(err).status === 404) return null;
          throw err;
        },
      ),
    [],
  );
  if (metrics.data === null || (metrics.data === undefined && !metrics.error)) return null;
  return (
    <section aria-labelledby="op-metrics">
      <h2 id="op-metrics">Metrics</h2>
      <ErrorNote error={metrics.error} />
      {metrics.data &&
        Object.entries(metrics.data).map(([key, value]) => (
          <div key={key} className="card" style={{ marginBottom: '0.75rem' }}>
            <h3 style={{ marginTop: 0 }}>{key.replace(/_/g, ' ')}</h3>
            <OperatorMetricsBlock value={value} />
          </div>
        ))}
    </section>
  );
}

function OperatorMetricsBlock({ value }: { value: Json }) {
  // A list of rows, or a map of rows (e.g. per route): a table.
  const rows: Array<[string | null, JsonObject]> | null = Array.isArray(value)
    ? value.every(isObject)
      ? value.map((v) => [null, v as JsonObject])
      : null
    : isObject(value) && Object.values(value).length > 0 && Object.values(value).every(isObject)
      ? Object.entries(value).map(([k, v]) => [k, v as JsonObject])
      : null;
  if (rows) {
    const columns = [...new Set(rows.flatMap(([, r]) => Object.keys(r)))];
    const keyed = rows.some(([k]) => k !== null);
    return (
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              {keyed && <th scope="col">Name</th>}
              {columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([k, r], i) => (
              <tr key={k ?? i}>
                {keyed && <td>{k}</td>}
                {columns.map((c) => (
                  <td key={c}>{cell(r[c])}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  // Named counters: bars.
  if (isObject(value) && Object.values(value).every((v) => typeof v === 'number')) {
    return <Bars items={Object.entries(value).map(([label, v]) => ({ label, value: v as number }))} />;
  }
  return <pre>{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>;
}
