import { Link } from 'react-router';
import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc, seg, type ApiOutput } from '../api.ts';
import { MemoryRefText } from './MemoryRelated.tsx';
import { StateBadge, validity } from './MemoryTimes.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

type Entry = ApiOutput['memories']['history']['newer'][number];

const link = (m: Memory) => `/collections/${seg(m.collection)}/memories/${seg(m.id)}`;

/**
 * The memory's supersession history both ways (memories.history, docs/time.md): the fact that
 * replaced it and those after it, and the facts it replaced, each with when it held.
 */
export function MemorySupersession({ collection, id }: { collection: string; id: string }) {
  const history = useApi(() => rpc.memories.history.query({ collection, id }), [collection, id]);
  const h = history.data;
  const replacedBy = h?.newer.find((e) => e.steps === 1);
  return (
    <section aria-labelledby="supersession-title">
      <h2 id="supersession-title">Supersession history</h2>
      <ErrorNote error={history.error} />
      {history.loading && <Busy label="Loading supersession history…" />}
      {h && (
        <>
          {replacedBy ? (
            <p className="card" style={{ borderColor: '#f1c27d' }}>
              <span className="badge warn">superseded</span> This fact was replaced on{' '}
              <time dateTime={h.memory.superseded_at ?? undefined}>{when(h.memory.superseded_at)}</time> by{' '}
              <Link to={link(replacedBy.memory)}>
                <MemoryRefText text={replacedBy.memory.text} />
              </Link>
              . It no longer appears in search.
            </p>
          ) : (
            <p className="muted">Nothing has superseded this memory.</p>
          )}
          {h.newer.length > 1 && <HistoryList title="Later versions" label="Later versions" entries={h.newer} />}
          {h.older.length > 0 ? (
            <HistoryList title="Facts it superseded" label="Facts it superseded" entries={h.older} />
          ) : (
            <p className="muted">It superseded no other fact.</p>
          )}
        </>
      )}
    </section>
  );
}

function HistoryList({ title, label, entries }: { title: string; label: string; entries: Entry[] }) {
  return (
    <>
      <h3 style={{ fontSize: '1rem' }}>{title}</h3>
      <ul aria-label={label}>
        {entries.map(({ memory: m, steps }) => (
          <li key={m.id}>
            <Link to={link(m)}>
              <MemoryRefText text={m.text} />
            </Link>{' '}
            <span className="muted">
              (held {validity(m)}; stored {when(m.created_at)}
              {m.superseded_at && <>, superseded {when(m.superseded_at)}</>}
              {steps > 1 && <>; {steps} steps away</>})
            </span>{' '}
            <StateBadge memory={m} />
          </li>
        ))}
      </ul>
    </>
  );
}
