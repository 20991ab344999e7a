import { useEffect } from 'react';
import { Link } from 'react-router';
import { query, rpc, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

type ReviewSummary = ApiOutput['changesets']['list']['changesets'][number];

/** How often a running change set is read again until its run ends. */
export const REVIEW_POLL_MS = 1000;

/** How many changes are in each state, the empty states left out: "2 proposed · 1 applied". */
export const reviewCounts = (counts: ReviewSummary['counts']) =>
  (Object.keys(counts) as Array<keyof typeof counts>)
    .filter((s) => counts[s] > 0)
    .map((s) => `${counts[s]} ${s}`)
    .join(' · ') || 'no changes';

/** What went wrong in a run: the proposals it left out (it went on without them), and why it stopped, if it did. */
export function ReviewRunErrors({ set }: { set: Pick<ReviewSummary, 'errors' | 'error'> }) {
  return (
    <>
      {set.errors.length > 0 && (
        <div className="muted wrap" style={{ fontSize: '0.85rem' }}>
          Proposals the run left out:
          <ul style={{ margin: 0 }}>
            {set.errors.map((e, i) => (
              <li key={i}>{e.detail}</li>
            ))}
          </ul>
        </div>
      )}
      {set.error && <p className="error wrap">The run failed: {set.error}</p>}
    </>
  );
}

/**
 * A collection's change sets, newest first, and the button that starts a consolidation run (any
 * key that may write the collection; the run changes nothing by itself). A new run opens at once
 * and shows itself running.
 */
export function ReviewChangesets(props: { collection: string; opened: string | null; version: number; onOpen(id: string): void }) {
  const { collection } = props;
  const { canWrite } = useSession();
  const list = useApi(() => rpc.changesets.list.query({ collection }), [collection, props.version]);
  const action = useAction();
  // A run started here, by another client or by the schedule shows its counts once it ends.
  const running = list.data?.changesets.some((s) => s.state === 'running');
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(list.reload, REVIEW_POLL_MS);
    return () => clearTimeout(timer);
  }, [list.data]);

  async function propose() {
    const started = await action.run(() => rpc.consolidation.run.mutate({ collection }));
    if (!started) return;
    props.onOpen(started.id);
    list.reload();
  }

  const sets = list.data?.changesets;
  return (
    <section aria-labelledby="review-changesets" className="card">
      <h2 id="review-changesets" style={{ marginTop: 0 }}>
        Change sets
      </h2>
      <p className="muted">
        A consolidation run reads the collection and proposes changes (near-duplicates merged, outdated facts superseded, noise archived, validity fixed), each
        with its evidence. Nothing changes until a change is applied, and an applied change can be undone.
      </p>
      {canWrite && (
        <button type="button" className="primary" onClick={propose} disabled={action.busy}>
          Propose a clean-up
        </button>
      )}
      <ErrorNote error={action.error} />
      <ErrorNote error={list.error} />
      {list.loading && !sets && <Busy label="Loading change sets…" />}
      {sets && sets.length === 0 && <p className="muted">No change sets yet.</p>}
      {sets && sets.length > 0 && (
        <ul aria-label="Change sets" style={{ paddingLeft: '1.2rem' }}>
          {sets.map((s) => (
            <li key={s.id} data-state={s.state} style={{ margin: '0.4rem 0' }}>
              <Link to={query({ collection, changeset: s.id })} aria-current={s.id === props.opened ? 'page' : undefined}>
                {when(s.created_at)}
              </Link>
              <span className={s.state === 'failed' ? 'badge warn' : 'badge'}>{s.state}</span>
              <div className="muted wrap" style={{ fontSize: '0.85rem' }}>
                {s.trigger === 'schedule' ? 'scheduled' : 'requested'} · {reviewCounts(s.counts)}
              </div>
              <ReviewRunErrors set={s} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
