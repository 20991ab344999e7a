import { useState, type FormEvent } from 'react';
import { api, rpc, seg, type ApiOutput, type SearchBody } from '../api.ts';
import { useSession } from '../session.tsx';
import { HygieneDone, HygieneMemoryLine } from './HygieneMemoryLine.tsx';
import { Busy, ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

interface HygieneForgetPreview {
  query: string;
  min_score: number;
  limit: number;
  matches: ApiOutput['search']['collection']['results'];
}

/**
 * Semantic forget (POST C/forget) has no dry run, so the preview is a vector search with the same
 * query, threshold and limit, archived memories included: the same cosine similarity forget
 * uses. Superseded facts are the one difference (search never shows them; forget deletes them).
 */
export function HygieneForget({ collection }: { collection: string }) {
  const { canWrite } = useSession();
  const [q, setQ] = useState('');
  const [minScore, setMinScore] = useState('0.5');
  // Search answers at most 50, so the preview stays exact by asking forget for no more.
  const [limit, setLimit] = useState('10');
  const [preview, setPreview] = useState<HygieneForgetPreview | null>(null);
  const [done, setDone] = useState<{ deleted: number; texts: string[] } | null>(null);
  const action = useAction();

  async function findMatches(e: FormEvent) {
    e.preventDefault();
    const asked = { query: q, min_score: Number(minScore), limit: Number(limit) };
    setDone(null);
    // Search goes over REST, as the playground's does (see `api`).
    const body: SearchBody = { ...asked, mode: 'vector', include_archived: true };
    const res = await action.run(() => api<ApiOutput['search']['collection']>('POST', `/v1/memory/collections/${seg(collection)}/search`, { body }));
    setPreview(res ? { ...asked, matches: res.results } : null);
  }

  async function forget() {
    if (!preview) return;
    const { query, min_score, limit: max } = preview;
    const res = await action.run(() => rpc.memories.forget.mutate({ collection, query, min_score, limit: max }));
    if (!res) return;
    const byId = new Map(preview.matches.map((m) => [m.id, m.text]));
    setDone({ deleted: res.deleted, texts: res.ids.map((id) => byId.get(id) ?? `${id} (a superseded fact)`) });
    setPreview(null);
  }

  const n = preview?.matches.length ?? 0;
  return (
    <section aria-labelledby="hygiene-forget" className="card">
      <h2 id="hygiene-forget" style={{ marginTop: 0 }}>
        Forget by meaning
      </h2>
      <p className="muted">Deletes the memories most similar to a description, for good. First see what matches.</p>
      <form onSubmit={findMatches}>
        <div className="field">
          <label htmlFor="hygiene-forget-query">What to forget</label>
          <input
            id="hygiene-forget-query"
            required
            maxLength={10_000}
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="e.g. my old home address"
          />
        </div>
        <div className="row" style={{ marginBottom: '0.6rem' }}>
          <label htmlFor="hygiene-forget-score">Minimum similarity (0 to 1)</label>
          <input
            id="hygiene-forget-score"
            type="number"
            min={0}
            max={1}
            step={0.05}
            required
            value={minScore}
            onChange={(e) => setMinScore(e.target.value)}
            style={{ width: '6rem' }}
          />
          <label htmlFor="hygiene-forget-limit">At most (1 to 50)</label>
          <input
            id="hygiene-forget-limit"
            type="number"
            min={1}
            max={50}
            step={1}
            required
            value={limit}
            onChange={(e) => setLimit(e.target.value)}
            style={{ width: '6rem' }}
          />
        </div>
        <button type="submit" disabled={action.busy}>
          Show matches (dry run)
        </button>
      </form>
      {action.busy && <Busy />}
      <ErrorNote error={action.error} />
      {preview && (
        <section aria-label="Forget matches">
          <h3>
            {n} memor{n === 1 ? 'y' : 'ies'} at least {preview.min_score} similar to “{preview.query}”
          </h3>
          {n === 0 && <p className="muted">Nothing current or archived matches.</p>}
          {n > 0 && (
            <ul>
              {preview.matches.map((m) => (
                <li key={m.id}>
                  <HygieneMemoryLine collection={collection} m={m} extra={`similarity ${m.score.toFixed(3)}`} />
                </li>
              ))}
            </ul>
          )}
          <p className="muted">Forget also deletes superseded facts that match, which search does not show.</p>
          {canWrite && (
            <ConfirmButton label="Forget these memories" title="Forget for good?" onConfirm={forget} disabled={action.busy}>
              <p>
                Deletes up to {preview.limit} memories at least {preview.min_score} similar to “{preview.query}”: the {n} shown, and any superseded facts that
                match. Deleted memories cannot be restored.
              </p>
            </ConfirmButton>
          )}
        </section>
      )}
      {done && (
        <HygieneDone texts={done.texts}>
          <p className="ok" style={{ margin: 0 }}>
            Forgot {done.deleted} memor{done.deleted === 1 ? 'y' : 'ies'}.
          </p>
        </HygieneDone>
      )}
    </section>
  );
}
