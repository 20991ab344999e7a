import { rpc } from '../api.ts';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/** The collection's summary and themes, and the profile of its subject (both answer without an LLM too). */
export function ReportDigest({ collection }: { collection: string }) {
  const summary = useApi(() => rpc.graph.summary.query({ collection }), [collection]);
  const profile = useApi(() => rpc.graph.profile.query({ collection }), [collection]);
  return (
    <div className="grid" style={{ gridTemplateColumns: 'repeat(auto-fit, minmax(min(100%, 320px), 1fr))', marginTop: '1rem' }}>
      <section aria-labelledby="report-summary" className="card">
        <h2 id="report-summary" style={{ marginTop: 0 }}>
          Summary
        </h2>
        <ErrorNote error={summary.error} />
        {summary.loading && !summary.data && <Busy label="Summarising…" />}
        {summary.data && (
          <>
            <p style={{ whiteSpace: 'pre-wrap' }}>{summary.data.summary || <span className="muted">Nothing to summarise yet.</span>}</p>
            {summary.data.themes.length > 0 && (
              <p aria-label="Themes">
                Themes:
                {summary.data.themes.map((t) => (
                  <span key={t} className="badge">
                    {t}
                  </span>
                ))}
              </p>
            )}
            <p className="muted" style={{ fontSize: '0.85rem' }}>
              From the newest {summary.data.based_on} memories · written {when(summary.data.generated_at)}
            </p>
          </>
        )}
      </section>
      <section aria-labelledby="report-profile" className="card">
        <h2 id="report-profile" style={{ marginTop: 0 }}>
          Profile
        </h2>
        <ErrorNote error={profile.error} />
        {profile.loading && !profile.data && <Busy label="Building the profile…" />}
        {profile.data && (
          <>
            <p style={{ whiteSpace: 'pre-wrap' }}>{profile.data.profile || <span className="muted">No facts or preferences yet.</span>}</p>
            <p className="muted" style={{ fontSize: '0.85rem' }}>
              From {profile.data.based_on} current facts and preferences
            </p>
          </>
        )}
      </section>
    </div>
  );
}
