import { useEffect, useRef, useState } from 'react';
import { useLocation } from 'react-router';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { CursorPager, useCursorPages } from './CursorPager.tsx';
import { shortenMemoryText } from './MemoryListItem.tsx';
import { QuarantineItem } from './QuarantineItem.tsx';
import { QUARANTINE_NAMES, QUARANTINE_VIEWS, type QuarantineState } from './TrustNames.ts';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/** Memories a page shows; a small page keeps each held text readable in full. */
const PAGE = 10;

const EMPTY: Record<QuarantineState, string> = {
  held: 'Nothing is held: no memory waits for a decision.',
  released: 'No memory has been released.',
  rejected: 'No memory has been rejected.',
  flagged: 'No memory has been flagged.',
};

/**
 * The tenant's quarantine (docs/trust.md): memories whose text tries to instruct an agent, newest
 * first, in one state at a time. The service shows it to admin keys only (the caller leaves it out
 * for others); a writable one releases or rejects what is held.
 */
export function QuarantineList() {
  const { canAdmin } = useSession();
  const [state, setState] = useState<QuarantineState>('held');
  const pages = useCursorPages();
  // Each answer names what it answers: the page of a state just left is not shown under the new one while it loads.
  const shown = `${state}/${pages.cursor ?? ''}`;
  const list = useApi(async () => ({ shown, ...(await rpc.quarantine.list.query({ state, limit: PAGE, cursor: pages.cursor })) }), [shown]);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);

  async function decide(id: string, how: 'release' | 'reject') {
    setDone(null);
    const m = await action.run(() => (how === 'release' ? rpc.quarantine.release : rpc.quarantine.reject).mutate({ id }));
    // Also after a refusal: another admin may have decided it meanwhile, and the list shows it as it is now.
    list.reload();
    if (m) setDone(`${m.quarantine?.state === 'released' ? 'Released' : 'Rejected'}: “${shortenMemoryText(m.text, 80)}”`);
  }

  const page = list.data?.shown === shown ? list.data : undefined;
  const memories = page?.memories;

  // A link to #quarantine (from a held memory's page) lands here once the list is in, below the change sets: the browser looked for it before it was.
  const { hash } = useLocation();
  const scrolled = useRef(false);
  useEffect(() => {
    if (scrolled.current || hash !== '#quarantine' || !page) return;
    scrolled.current = true;
    document.getElementById('quarantine')?.scrollIntoView();
  }, [hash, page]);
  return (
    <section aria-labelledby="quarantine" className="card">
      <h2 id="quarantine" style={{ marginTop: 0 }}>
        Quarantine
      </h2>
      <p className="muted">
        Text that tries to instruct an agent (run this, send that, do not tell the user) is held here, by the policy below: stored, but served to no agent until
        it is released. A rejected memory is archived and stays held.
      </p>
      <form aria-label="Quarantine state" onSubmit={(e) => e.preventDefault()}>
        <div className="field" style={{ maxWidth: '24rem' }}>
          <label htmlFor="quarantine-state">Show</label>
          <select
            id="quarantine-state"
            aria-describedby="quarantine-state-what"
            value={state}
            onChange={(e) => {
              setState(e.target.value as QuarantineState);
              pages.first();
              setDone(null);
            }}
          >
            {QUARANTINE_VIEWS.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <span id="quarantine-state-what" className="muted" style={{ fontSize: '0.85rem' }}>
            {QUARANTINE_NAMES[state]}
          </span>
        </div>
      </form>
      {done && (
        <p className="ok" role="status">
          {done}
        </p>
      )}
      <ErrorNote error={action.error} />
      <ErrorNote error={list.error} />
      {!memories && !list.error && <Busy label="Loading the quarantine…" />}
      {memories && memories.length === 0 && <p className="muted">{pages.page === 1 ? EMPTY[state] : 'No more memories.'}</p>}
      {memories && memories.length > 0 && (
        <ol aria-label={`Memories ${state}`} className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {memories.map((m) => (
            <li key={m.id}>
              <QuarantineItem memory={m} busy={action.busy} decide={canAdmin && m.quarantine?.state === 'held' ? (how) => void decide(m.id, how) : undefined} />
            </li>
          ))}
        </ol>
      )}
      <CursorPager pages={pages} next={page?.next} label="Quarantine pages" />
    </section>
  );
}
