import { useState, type FormEvent } from 'react';
import { rpc, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { HygieneDone, HygieneMemoryLine } from './HygieneMemoryLine.tsx';
import { Busy, ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

type HygieneCluster = Extract<ApiOutput['hygiene']['dedup'], { clusters: unknown }>['clusters'][number];

/**
 * Dedup (POST C/dedup): the dry run's clusters first, each keeper and the duplicates that would be
 * deleted; only then, for a key that may write, the run itself behind a confirmation.
 */
export function HygieneDedup({ collection }: { collection: string }) {
  const { canWrite } = useSession();
  const [threshold, setThreshold] = useState('0.95');
  const [preview, setPreview] = useState<{ threshold: number; clusters: HygieneCluster[] } | null>(null);
  const [done, setDone] = useState<{ deleted: number; texts: string[] } | null>(null);
  const action = useAction();

  async function dryRun(e: FormEvent) {
    e.preventDefault();
    const t = Number(threshold);
    setDone(null);
    const res = await action.run(() => rpc.hygiene.dedup.mutate({ collection, threshold: t, dry_run: true }));
    setPreview(res && 'clusters' in res ? { threshold: t, clusters: res.clusters } : null);
  }

  async function runForReal() {
    if (!preview) return;
    const res = await action.run(() => rpc.hygiene.dedup.mutate({ collection, threshold: preview.threshold, dry_run: false }));
    if (!res || !('deleted' in res)) return;
    // The texts come from the dry run, since the deleted memories cannot be read any more.
    const byId = new Map(preview.clusters.flatMap((c) => c.duplicates).map((m) => [m.id, m.text]));
    setDone({ deleted: res.deleted, texts: res.ids.map((id) => byId.get(id) ?? id) });
    setPreview(null);
  }

  const doomed = preview?.clusters.reduce((n, c) => n + c.duplicates.length, 0) ?? 0;

  return (
    <section aria-labelledby="hygiene-dedup" className="card">
      <h2 id="hygiene-dedup" style={{ marginTop: 0 }}>
        Remove duplicates
      </h2>
      <p className="muted">
        Finds memories at least this similar to a better copy (the pinned one, else the most important, then the newest) among the 500 newest. Pinned memories
        are never deleted.
      </p>
      <form onSubmit={dryRun} className="row">
        <label htmlFor="hygiene-threshold">Similarity threshold (0 to 1)</label>
        <input
          id="hygiene-threshold"
          type="number"
          min={0}
          max={1}
          step={0.01}
          required
          value={threshold}
          onChange={(e) => setThreshold(e.target.value)}
          style={{ width: '6rem' }}
        />
        <button type="submit" disabled={action.busy}>
          Find duplicates (dry run)
        </button>
      </form>
      {action.busy && <Busy />}
      <ErrorNote error={action.error} />
      {preview && (
        <section aria-label="Duplicate clusters">
          <h3>
            Dry run at {preview.threshold}: {preview.clusters.length} cluster(s), {doomed} memor{doomed === 1 ? 'y' : 'ies'} would be deleted
          </h3>
          {preview.clusters.length === 0 && <p className="muted">No duplicates at this threshold. Nothing would change.</p>}
          {preview.clusters.map((c) => (
            <div key={c.keeper.id} className="card" data-testid="dedup-cluster" style={{ marginBottom: '0.5rem' }}>
              <p style={{ margin: 0 }}>
                <strong>Keeps</strong> <span className="muted">(similarity of every duplicate ≥ {c.similarity.toFixed(3)})</span>
              </p>
              <HygieneMemoryLine collection={collection} m={c.keeper} />
              <p style={{ margin: '0.5rem 0 0' }}>
                <strong>Deletes</strong>
              </p>
              <ul style={{ margin: 0 }}>
                {c.duplicates.map((m) => (
                  <li key={m.id}>
                    <HygieneMemoryLine collection={collection} m={m} />
                  </li>
                ))}
              </ul>
            </div>
          ))}
          {canWrite && doomed > 0 && (
            <ConfirmButton
              label={`Delete ${doomed} duplicate${doomed === 1 ? '' : 's'}`}
              title="Delete the duplicates?"
              onConfirm={runForReal}
              disabled={action.busy}
            >
              <p>
                Deletes the {doomed} duplicate{doomed === 1 ? '' : 's'} listed (threshold {preview.threshold}) and keeps one copy of each. Deleted memories
                cannot be restored. If the collection changed since the dry run, the run finds the duplicates again and may differ.
              </p>
            </ConfirmButton>
          )}
        </section>
      )}
      {done && (
        <HygieneDone texts={done.texts}>
          <p className="ok" style={{ margin: 0 }}>
            Deleted {done.deleted} duplicate{done.deleted === 1 ? '' : 's'}.
          </p>
        </HygieneDone>
      )}
    </section>
  );
}
