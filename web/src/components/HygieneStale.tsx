import { useState, type FormEvent } from 'react';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { HygieneDone, HygieneMemoryLine } from './HygieneMemoryLine.tsx';
import { Busy, ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** The dry run answers ids only; this many of them are read to show what they are. */
const SHOWN = 50;

/** The dry run's answer, the days it was asked for, and the first memories it names. */
type HygieneStalePreview = Extract<ApiOutput['hygiene']['archiveStale'], { would_archive: number }> & { days: number; memories: Memory[] };

/**
 * Archive-stale (POST C/archive-stale): the dry run lists the memories that would be archived
 * (oldest first), then a confirmed run archives them (hidden from search, restorable).
 */
export function HygieneStale({ collection }: { collection: string }) {
  const { canWrite } = useSession();
  const [days, setDays] = useState('90');
  const [preview, setPreview] = useState<HygieneStalePreview | null>(null);
  const [done, setDone] = useState<{ archived: number; left: number } | null>(null);
  const action = useAction();

  async function dryRun(e: FormEvent) {
    e.preventDefault();
    const d = Number(days);
    setDone(null);
    const res = await action.run(async () => {
      const dry = await rpc.hygiene.archiveStale.mutate({ collection, older_than_days: d, dry_run: true });
      // A dry run answers what it would archive (the check tells the two answers' types apart).
      if (!('would_archive' in dry)) return null;
      const memories = await Promise.all(dry.ids.slice(0, SHOWN).map((id) => rpc.memories.get.query({ collection, id })));
      return { days: d, ...dry, memories };
    });
    setPreview(res ?? null);
  }

  async function runForReal() {
    if (!preview) return;
    const res = await action.run(() => rpc.hygiene.archiveStale.mutate({ collection, older_than_days: preview.days, dry_run: false }));
    if (!res || !('archived' in res)) return;
    setDone({ archived: res.archived, left: Math.max(0, preview.would_archive - res.archived) });
    setPreview(null);
  }

  const n = preview?.would_archive ?? 0;
  return (
    <section aria-labelledby="hygiene-stale" className="card">
      <h2 id="hygiene-stale" style={{ marginTop: 0 }}>
        Archive stale memories
      </h2>
      <p className="muted">Archives memories nobody updated for a while (pinned ones stay). Archived memories leave search but are kept and can be restored.</p>
      <form onSubmit={dryRun} className="row">
        <label htmlFor="hygiene-days">Not updated for (days)</label>
        <input id="hygiene-days" type="number" min={0} step={1} required value={days} onChange={(e) => setDays(e.target.value)} style={{ width: '6rem' }} />
        <button type="submit" disabled={action.busy}>
          Find stale memories (dry run)
        </button>
      </form>
      {action.busy && <Busy />}
      <ErrorNote error={action.error} />
      {preview && (
        <section aria-label="Stale memories">
          <h3>
            Dry run: {n} memor{n === 1 ? 'y' : 'ies'} not updated for {preview.days} days would be archived
          </h3>
          {n === 0 && <p className="muted">Nothing would change.</p>}
          {preview.memories.length > 0 && (
            <ul>
              {preview.memories.map((m) => (
                <li key={m.id}>
                  <HygieneMemoryLine collection={collection} m={m} />
                </li>
              ))}
            </ul>
          )}
          {n > preview.memories.length && <p className="muted">…and {n - preview.memories.length} more, oldest first.</p>}
          {canWrite && n > 0 && (
            <ConfirmButton
              label={`Archive ${n} memor${n === 1 ? 'y' : 'ies'}`}
              title="Archive the stale memories?"
              onConfirm={runForReal}
              disabled={action.busy}
            >
              <p>
                Archives the memories not updated for {preview.days} days ({n} at the dry run). They leave search and listings but are kept, and each can be
                restored from its page.
              </p>
            </ConfirmButton>
          )}
        </section>
      )}
      {done && (
        <HygieneDone>
          <p className="ok" style={{ margin: 0 }}>
            Archived {done.archived} memor{done.archived === 1 ? 'y' : 'ies'}.
          </p>
          {done.left > 0 && <p className="muted">One run archives a batch: {done.left} remain. Run the dry run again for the rest.</p>}
        </HygieneDone>
      )}
    </section>
  );
}
