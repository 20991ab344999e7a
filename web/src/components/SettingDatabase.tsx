import { rpc } from '../api.ts';
import { SettingFacts } from './SettingFacts.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/** Where the account's memories live: the platform's database or its own PostgreSQL (changed through the API, docs/deployment.md). */
export function SettingDatabase() {
  const config = useApi(() => rpc.database.getConfig.query(), []);
  const c = config.data;
  return (
    <section className="card" aria-labelledby="database-title">
      <h2 id="database-title">Database</h2>
      <ErrorNote error={config.error} />
      {config.loading && !c && <Busy label="Loading…" />}
      {c && !c.available && <p className="muted">A database of your own is not available on this server: {c.unavailable_reason}</p>}
      {c && c.available && (
        <SettingFacts
          items={[
            ['Your memories live in', c.configured ? 'your own PostgreSQL database' : "the platform's database"],
            c.configured && ['Connection', <code>{c.connection_string}</code>],
            c.configured && ['Updated', when(c.updated_at)],
          ]}
        />
      )}
    </section>
  );
}
