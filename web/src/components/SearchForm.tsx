import { useState, type FormEvent } from 'react';
import { ApiError, type SearchBody } from '../api.ts';

type SearchMode = NonNullable<SearchBody['mode']>;

/** The playground's request as the form and the page address hold it (strings, as typed). */
export interface SearchState {
  q: string;
  /** '' searches every collection the key may read. */
  collection: string;
  mode: SearchMode;
  limit: string;
  min_score: string;
  category: string;
  container_tag: string;
  /** A JSON object for metadata_filter, or ''. */
  metadata: string;
  /** A moment in the reader's local time (datetime-local), or '' for what holds now. */
  as_of: string;
  archived: boolean;
  rewrite: boolean;
  rerank: boolean;
}

/** The service's defaults (src/schemas/search.ts), left out of the address when unchanged. */
const DEFAULTS = { mode: 'hybrid', limit: '5', min_score: '0.3' } as const;
const MODES: SearchMode[] = ['hybrid', 'vector', 'text'];

/**
 * The request lives in the page address so that a search can be reloaded, shared and walked
 * back with the browser's back button; the key never does.
 */
export function searchStateFromUrl(p: URLSearchParams): SearchState {
  const mode = p.get('mode') as SearchMode | null;
  return {
    q: p.get('q') ?? '',
    collection: p.get('collection') ?? '',
    mode: mode && MODES.includes(mode) ? mode : DEFAULTS.mode,
    limit: p.get('limit') ?? DEFAULTS.limit,
    min_score: p.get('min_score') ?? DEFAULTS.min_score,
    category: p.get('category') ?? '',
    container_tag: p.get('container_tag') ?? '',
    metadata: p.get('metadata') ?? '',
    as_of: p.get('as_of') ?? '',
    archived: p.get('archived') === '1',
    rewrite: p.get('rewrite') === '1',
    rerank: p.get('rerank') === '1',
  };
}

export function searchStateToUrl(s: SearchState): URLSearchParams {
  const p = new URLSearchParams();
  p.set('q', s.q);
  if (s.collection) p.set('collection', s.collection);
  if (s.mode !== DEFAULTS.mode) p.set('mode', s.mode);
  if (s.limit !== DEFAULTS.limit) p.set('limit', s.limit);
  if (s.min_score !== DEFAULTS.min_score) p.set('min_score', s.min_score);
  for (const k of ['category', 'container_tag', 'metadata', 'as_of'] as const) if (s[k].trim()) p.set(k, s[k].trim());
  for (const k of ['archived', 'rewrite', 'rerank'] as const) if (s[k]) p.set(k, '1');
  return p;
}

/** The JSON body of the search request; the service validates the numbers and answers a 422 `detail` when they are off. */
export function searchBody(s: SearchState): SearchBody {
  const body: SearchBody = { query: s.q, mode: s.mode };
  if (s.limit.trim()) body.limit = Number(s.limit);
  if (s.min_score.trim()) body.min_score = Number(s.min_score);
  if (s.category.trim()) body.category = s.category.trim();
  if (s.container_tag.trim()) body.container_tag = s.container_tag.trim();
  if (s.metadata.trim()) {
    try {
      body.metadata_filter = JSON.parse(s.metadata);
    } catch {
      throw new ApiError(422, 'The metadata filter is not valid JSON (for example {"team": "sales"})');
    }
  }
  if (s.as_of.trim()) {
    const moment = new Date(s.as_of.trim());
    if (Number.isNaN(moment.getTime())) throw new ApiError(422, 'The moment to search as of is not a date and time');
    body.as_of = moment.toISOString();
  }
  if (s.archived) body.include_archived = true;
  if (s.rewrite) body.rewrite = true;
  if (s.rerank) body.rerank = true;
  return body;
}

/** The playground's form: query, where, how, filters and the LLM switches. */
export function SearchForm(props: { initial: SearchState; collections: string[]; onSearch(s: SearchState): void }) {
  const [s, setS] = useState(props.initial);
  const [formError, setFormError] = useState<string | null>(null);
  const set = <K extends keyof SearchState>(k: K, v: SearchState[K]) => setS((old) => ({ ...old, [k]: v }));

  function submit(e: FormEvent) {
    e.preventDefault();
    // Checked here so a typo in the JSON is pointed out before anything is sent.
    try {
      searchBody(s);
    } catch (err) {
      setFormError(err instanceof ApiError ? err.detail : String(err));
      return;
    }
    setFormError(null);
    props.onSearch(s);
  }

  return (
    <form onSubmit={submit} className="card" aria-label="Search">
      <div className="field">
        <label htmlFor="search-query">Query</label>
        <input
          id="search-query"
          type="search"
          value={s.q}
          required
          maxLength={10_000}
          onChange={(e) => set('q', e.target.value)}
          placeholder="What to look for, in plain words"
        />
      </div>
      <div className="grid">
        <div className="field">
          <label htmlFor="search-collection">Collection</label>
          <select id="search-collection" value={s.collection} onChange={(e) => set('collection', e.target.value)}>
            <option value="">All collections</option>
            {/* A collection from the address that the list does not hold still shows (the service will say why). */}
            {[...new Set([...props.collections, ...(s.collection ? [s.collection] : [])])].map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="search-mode">Mode</label>
          <select id="search-mode" value={s.mode} onChange={(e) => set('mode', e.target.value as SearchMode)}>
            <option value="hybrid">hybrid (vector + full text)</option>
            <option value="vector">vector (meaning)</option>
            <option value="text">text (keywords)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="search-limit">Results (1 to 50)</label>
          <input id="search-limit" type="number" min={1} max={50} step={1} value={s.limit} onChange={(e) => set('limit', e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="search-min-score">Minimum similarity (0 to 1)</label>
          <input id="search-min-score" type="number" min={0} max={1} step={0.05} value={s.min_score} onChange={(e) => set('min_score', e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="search-category">Category</label>
          <input id="search-category" value={s.category} onChange={(e) => set('category', e.target.value)} placeholder="any" />
        </div>
        <div className="field">
          <label htmlFor="search-container-tag">Container tag</label>
          <input id="search-container-tag" value={s.container_tag} onChange={(e) => set('container_tag', e.target.value)} placeholder="any" />
        </div>
        <div className="field">
          <label htmlFor="search-metadata">Metadata contains (JSON)</label>
          <input id="search-metadata" value={s.metadata} onChange={(e) => set('metadata', e.target.value)} placeholder='{"team": "sales"}' />
        </div>
        <div className="field">
          {/* Time travel (docs/time.md): what held at that moment, superseded and ended facts included. */}
          <label htmlFor="search-as-of">As of (empty: what holds now)</label>
          <input id="search-as-of" type="datetime-local" step={1} value={s.as_of} onChange={(e) => set('as_of', e.target.value)} />
        </div>
      </div>
      <fieldset className="row" style={{ border: 0, padding: 0, margin: '0 0 0.6rem' }}>
        <legend className="muted" style={{ padding: 0, marginBottom: '0.3rem' }}>
          Options
        </legend>
        {(
          [
            ['archived', 'Include archived'],
            ['rewrite', 'Rewrite the query (LLM)'],
            ['rerank', 'Re-rank results (LLM)'],
          ] as const
        ).map(([k, label]) => (
          <span key={k}>
            <input id={`search-${k}`} type="checkbox" checked={s[k]} onChange={(e) => set(k, e.target.checked)} />{' '}
            <label htmlFor={`search-${k}`}>{label}</label>
          </span>
        ))}
      </fieldset>
      {formError && (
        <p className="error" role="alert">
          {formError}
        </p>
      )}
      <button type="submit" className="primary">
        Search
      </button>
    </form>
  );
}
