import { Link } from 'react-router';
import type { EvidenceMemory } from '../../../src/schemas/consolidation.ts';
import { seg } from '../api.ts';
import { when } from './ui.tsx';

/** One memory of a change's evidence, as a card: what a reviewer weighs to decide, and what the change does to it. */
export function ReviewMemory({ collection, m, fate }: { collection: string; m: EvidenceMemory; fate: string }) {
  const facts: Array<[string, string]> = [
    ['Category', m.category],
    ['Importance', String(m.importance)],
    ['Pinned', m.pinned ? 'yes' : 'no'],
    ['Created', when(m.created_at)],
    ['Updated', when(m.updated_at)],
    ['Valid from', when(m.valid_from)],
    ['Valid to', m.valid_to ? when(m.valid_to) : 'no end'],
    ['Recalls', m.recalls.toLocaleString()],
    ['Last recalled', m.last_recalled_at ? when(m.last_recalled_at) : 'never'],
    ['Confirmations', m.confirmations.toLocaleString()],
  ];
  return (
    <div className="card" data-fate={fate} style={{ padding: '0.6rem 0.8rem', borderColor: fate === 'kept' ? 'var(--accent)' : undefined }}>
      <span className={fate === 'kept' ? 'badge' : 'badge warn'} style={{ marginLeft: 0 }}>
        {fate}
      </span>
      <p className="wrap" style={{ margin: '0.4rem 0' }}>
        <Link to={`/collections/${seg(collection)}/memories/${seg(m.id)}`}>{m.text}</Link>
      </p>
      <dl className="wrap" style={{ display: 'grid', gridTemplateColumns: 'auto minmax(0, 1fr)', gap: '0.1rem 0.6rem', margin: 0, fontSize: '0.85rem' }}>
        {facts.map(([label, value]) => (
          <div key={label} style={{ display: 'contents' }}>
            <dt className="muted">{label}</dt>
            <dd style={{ margin: 0 }}>{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
