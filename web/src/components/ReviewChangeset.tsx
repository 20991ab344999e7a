import { useEffect, useState } from 'react';
import { apiError, rpc, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { ReviewChange } from './ReviewChange.tsx';
import { REVIEW_POLL_MS, reviewCounts, ReviewRunErrors } from './ReviewChangesets.tsx';
import { SettingFacts } from './SettingFacts.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from './ui.tsx';
import { useAction } from './use-api.ts';

type ReviewSet = ApiOutput['changesets']['get'];

const changesWord = (n: number) => `${n} change${n === 1 ? '' : 's'}`;

/**
 * One change set: its run, then every change with its evidence. An admin key ticks proposed
 * changes and applies or rejects them (or all), and undoes an applied one; other keys read
 * (the service refuses them those, docs/access.md "Key roles"). Each answer is the whole change
 * set again, shown as it comes.
 */
export function ReviewChangeset({ collection, id, onChanged }: { collection: string; id: string; onChanged(): void }) {
  const { canAdmin } = useSession();
  const [set, setSet] = useState<ReviewSet>();
  const [loadError, setLoadError] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const action = useAction();

  // Read, and read again while the run is running.
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const s = await rpc.changesets.get.query({ collection, id });
        if (!live) return;
        setSet(s);
        setLoadError(null);
        if (s.state === 'running') timer = setTimeout(load, REVIEW_POLL_MS);
      } catch (err) {
        if (live) setLoadError(apiError(err).detail);
      }
    };
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [collection, id]);

  async function decide(write: () => Promise<ReviewSet>) {
    const s = await action.run(write);
    if (!s) return;
    setSet(s);
    setSelected(new Set());
    onChanged();
  }
  const apply = (changes?: string[]) => decide(() => rpc.changesets.applyChanges.mutate({ collection, id, changes }));
  const reject = (changes?: string[]) => decide(() => rpc.changesets.reject.mutate({ collection, id, changes }));
  const undo = (change: string) => decide(() => rpc.changesets.undo.mutate({ collection, id, change }));

  if (!set) return loadError ? <ErrorNote error={loadError} /> : <Busy label="Loading the change set…" />;
  const proposed = set.changes.filter((c) => c.state === 'proposed');
  const picked = proposed.filter((c) => selected.has(c.id)).map((c) => c.id);
  const decidable = canAdmin && set.state === 'open' && proposed.length > 0;
  const toggle = (change: string, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      if (on) next.add(change);
      else next.delete(change);
      return next;
    });

  return (
    <section aria-labelledby="review-changeset" className="card">
      <h2 id="review-changeset" style={{ marginTop: 0 }}>
        Change set of {when(set.created_at)} <span className={set.state === 'failed' ? 'badge warn' : 'badge'}>{set.state}</span>
      </h2>
      <SettingFacts
        items={[
          ['Started', set.trigger === 'schedule' ? 'by the schedule' : 'on request'],
          ['Finished', set.finished_at ? `${when(set.finished_at)}${set.took_ms === null ? '' : ` (${(set.took_ms / 1000).toFixed(1)} s)`}` : '—'],
          ['Memories read', set.scanned.toLocaleString()],
          ['Near-duplicates from similarity', set.similarity.toFixed(2)],
          ['Changes', reviewCounts(set.counts)],
        ]}
      />
      <ReviewRunErrors set={set} />
      <ErrorNote error={loadError} />
      {set.state === 'running' && <Busy label="The run is reading the collection…" />}
      {(set.state === 'open' || set.state === 'reviewed') && set.changes.length === 0 && <p className="muted">The run found nothing to change.</p>}
      {decidable && (
        <div className="row" role="group" aria-label="Decide the proposed changes" style={{ margin: '0.6rem 0' }}>
          <ConfirmButton
            label={`Apply selected (${picked.length})`}
            confirmLabel={`Apply ${changesWord(picked.length)}`}
            title="Apply the selected changes?"
            className="primary"
            onConfirm={() => apply(picked)}
            disabled={action.busy || picked.length === 0}
          >
            <ApplyNote n={picked.length} />
          </ConfirmButton>
          <ConfirmButton
            label="Apply all"
            confirmLabel={`Apply ${changesWord(proposed.length)}`}
            title="Apply every proposed change?"
            onConfirm={() => apply()}
            disabled={action.busy}
          >
            <ApplyNote n={proposed.length} />
          </ConfirmButton>
          <ConfirmButton
            label={`Reject selected (${picked.length})`}
            confirmLabel={`Reject ${changesWord(picked.length)}`}
            title="Reject the selected changes?"
            onConfirm={() => reject(picked)}
            disabled={action.busy || picked.length === 0}
          >
            <RejectNote n={picked.length} />
          </ConfirmButton>
          <ConfirmButton
            label="Reject all"
            confirmLabel={`Reject ${changesWord(proposed.length)}`}
            title="Reject every proposed change?"
            onConfirm={() => reject()}
            disabled={action.busy}
          >
            <RejectNote n={proposed.length} />
          </ConfirmButton>
        </div>
      )}
      {action.busy && <Busy />}
      <ErrorNote error={action.error} />
      {set.changes.length > 0 && (
        <ul aria-label="Changes" style={{ listStyle: 'none', padding: 0, margin: 0 }} className="stack">
          {set.changes.map((c) => (
            <li key={c.id}>
              <ReviewChange
                collection={collection}
                change={c}
                selected={decidable && c.state === 'proposed' ? { on: selected.has(c.id), set: (on) => toggle(c.id, on) } : undefined}
                onUndo={canAdmin && c.state === 'applied' ? () => undo(c.id) : undefined}
                busy={action.busy}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function ApplyNote({ n }: { n: number }) {
  return (
    <p>
      Applies {changesWord(n)}, each on its own and all or nothing: a change whose memories changed, were pinned or deleted since the proposal fails and touches
      nothing. Nothing is deleted, and each applied change can be undone.
    </p>
  );
}

function RejectNote({ n }: { n: number }) {
  return <p>Rejects {changesWord(n)}: the memories stay as they are, and a rejected change cannot be applied later.</p>;
}
