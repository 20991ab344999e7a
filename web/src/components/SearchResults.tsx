import { Link } from 'react-router';
import { seg, type ApiOutput, type SearchBody } from '../api.ts';
import { validity } from './MemoryTimes.tsx';
import { FlaggedBadge, TrustBadge } from './TrustBadge.tsx';
import { when } from './ui.tsx';
import type { SearchState } from './SearchForm.tsx';

/** One search as it was sent and answered, with the time the browser waited for it. */
export interface SearchRun {
  state: SearchState;
  method: 'POST';
  path: string;
  body: SearchBody;
  response: ApiOutput['search']['all'];
  roundTripMs: number;
}

const ms = (n: number) => `${n.toLocaleString(undefined, { maximumFractionDigits: 1 })} ms`;

/** The server's own figures first (what a person tuning a query looks at), then what was asked. */
function SearchDiagnostics({ run }: { run: SearchRun }) {
  const { response: r, state: s } = run;
  const figures: Array<[string, string]> = [
    ['Mode', s.mode],
    ['Results', String(r.results.length)],
    ['Search', ms(r.search_ms)],
    ['Query embedding', ms(r.query_embedding_ms)],
    ['Round trip (browser)', ms(run.roundTripMs)],
    ['Cache', r.cached ? 'hit (answered from the cache)' : 'miss'],
    ['As of', run.body.as_of ? when(run.body.as_of) : 'now'],
  ];
  return (
    <section aria-labelledby="search-diagnostics">
      <h2 id="search-diagnostics">Diagnostics</h2>
      {/* Narrower cards than the shared grid's, so the figures sit in one row at desktop width and two a row on a phone. */}
      <dl className="grid" style={{ margin: 0, gridTemplateColumns: 'repeat(auto-fit, minmax(140px, 1fr))' }}>
        {figures.map(([label, value]) => (
          <div className="card" key={label}>
            <dt className="muted">{label}</dt>
            <dd style={{ margin: 0, fontWeight: 600 }}>{value}</dd>
          </div>
        ))}
      </dl>
      {(s.rewrite || s.rerank) && (
        <p className="muted">
          {[s.rewrite && 'Query rewrite', s.rerank && 'Re-ranking'].filter(Boolean).join(' and ')} requested. The service uses the tenant LLM for it; without an
          LLM, over the spend cap or when the call fails it quietly keeps the plain query and the fused order (the response does not say which happened).
        </p>
      )}
      <details>
        <summary>
          Request: {run.method} {run.path}
        </summary>
        <pre>{JSON.stringify(run.body, null, 2)}</pre>
      </details>
    </section>
  );
}

/** Results best first: score, collection, text (a link to the memory's page), category, trust class and age; flagged ones marked. */
export function SearchResultList({ run }: { run: SearchRun }) {
  const results = run.response.results;
  return (
    <>
      <SearchDiagnostics run={run} />
      <section aria-labelledby="search-results">
        <h2 id="search-results">Results</h2>
        {results.length === 0 ? (
          <p className="muted">Nothing matched. Try another mode, a lower minimum similarity, or fewer filters.</p>
        ) : (
          <ol style={{ listStyle: 'none', padding: 0, margin: 0, display: 'grid', gap: '0.5rem' }}>
            {results.map((m, i) => {
              const collection = m.collection ?? run.state.collection;
              return (
                <li key={m.id} className="card" data-testid="search-result">
                  <div className="row" style={{ justifyContent: 'space-between' }}>
                    <span>
                      <span className="muted">#{i + 1}</span> <strong>score {m.score.toFixed(3)}</strong>{' '}
                      <meter min={0} max={1} value={m.score} aria-label={`Score ${m.score.toFixed(3)}`} />
                    </span>
                    <span>
                      <Link to={`/collections/${seg(collection)}`}>{collection}</Link>
                      <span className="badge">{m.category}</span>
                      <TrustBadge trust={m.trust} />
                      {m.flagged && <FlaggedBadge />}
                      {m.images.length > 0 && <span className="badge">{m.images.length} image(s)</span>}
                    </span>
                  </div>
                  <p style={{ margin: '0.4rem 0', whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
                    <Link to={`/collections/${seg(collection)}/memories/${seg(m.id)}`}>{m.text}</Link>
                  </p>
                  <p className="muted" style={{ margin: 0, fontSize: '0.85rem' }}>
                    importance {m.importance} · source {m.source} · from {m.provenance.kind} · stored {when(m.created_at)}
                  </p>
                  <p className="muted" style={{ margin: 0, fontSize: '0.85rem' }} data-testid="result-times">
                    observed {when(m.observed_at)} · holds {validity(m)}
                  </p>
                </li>
              );
            })}
          </ol>
        )}
      </section>
    </>
  );
}
