import { Link } from 'react-router';
import type { LedgerEntry } from '../../../src/schemas/trust.ts';
import { query, seg } from '../api.ts';
import { shortenMemoryText } from './MemoryListItem.tsx';
import { TrustBadge } from './TrustBadge.tsx';
import { when } from './ui.tsx';

/** One memory as it was handed over: the text then (a link to the memory while it exists), what it is now, and its trust class. */
function HandedOver({ m }: { m: LedgerEntry['memories'][number] }) {
  return (
    <li className="wrap" data-memory-id={m.id}>
      {m.collection !== null && m.text !== null ? (
        <Link to={`/collections/${seg(m.collection)}/memories/${seg(m.id)}`}>{shortenMemoryText(m.text, 300)}</Link>
      ) : (
        <span className="muted">
          a memory since deleted, <code>{m.id}</code>
        </span>
      )}
      <span className={m.now === 'current' ? 'badge' : 'badge warn'} data-testid="ledger-now" title="What the memory is now">
        {m.now}
      </span>
      {m.trust && <TrustBadge trust={m.trust} />}
    </li>
  );
}

/**
 * One handover: when, to whom, through which front end and operation, in which session, and the
 * memories handed over. The agent and the session are links to the ledger narrowed to them.
 */
export function LedgerEntryCard({ entry: e }: { entry: LedgerEntry }) {
  return (
    <li className="card" data-testid="ledger-entry">
      <p className="row" style={{ margin: 0, gap: '0.2rem 0.8rem' }}>
        <time dateTime={e.at}>{when(e.at)}</time>
        {e.agent.id ? (
          <Link to={query({ agent_id: e.agent.id })} title="Only what this agent was given">
            <strong>{e.agent.label}</strong>
          </Link>
        ) : (
          <strong>{e.agent.label}</strong>
        )}
        <span>
          via <span className="badge">{e.via}</span>
        </span>
        <code className="wrap">{e.procedure}</code>
        {e.session_id && (
          <span className="wrap">
            session{' '}
            <Link to={query({ session_id: e.session_id })} title="Only this session">
              <code>{e.session_id}</code>
            </Link>
          </span>
        )}
      </p>
      <ul aria-label="Memories handed over" style={{ margin: '0.4rem 0', paddingLeft: '1.2rem' }}>
        {e.memories.map((m) => (
          <HandedOver key={m.id} m={m} />
        ))}
      </ul>
      <p className="muted wrap" style={{ margin: 0, fontSize: '0.8rem' }}>
        request <code>{e.request_id}</code>
      </p>
    </li>
  );
}
