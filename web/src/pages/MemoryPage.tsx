import type { ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { rpc, seg } from '../api.ts';
import { MemoryEditForm } from '../components/MemoryEditForm.tsx';
import { MemoryFlagButtons } from '../components/MemoryFlagButtons.tsx';
import { MemoryGivenTo } from '../components/MemoryGivenTo.tsx';
import { MemoryImages } from '../components/MemoryImages.tsx';
import { MemoryPropose } from '../components/MemoryPropose.tsx';
import { MemoryProvenance } from '../components/MemoryProvenance.tsx';
import { MemoryRelated } from '../components/MemoryRelated.tsx';
import { MemoryRetract } from '../components/MemoryRetract.tsx';
import { MemorySupersession } from '../components/MemorySupersession.tsx';
import { memoryTimeRows, StateBadge } from '../components/MemoryTimes.tsx';
import { MemoryTrust } from '../components/MemoryTrust.tsx';
import { TrustBadge } from '../components/TrustBadge.tsx';
import { Busy, ConfirmButton, ErrorNote } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/**
 * One memory: everything stored about it, when it held, where it came from and how far it is
 * trusted, its files, its neighbours, its supersession history and (for admin keys) who was given it.
 */
export function MemoryPage() {
  const { name, id } = useParams() as { name: string; id: string };
  const { me, canWrite } = useSession();
  const navigate = useNavigate();
  // The single get is the one that presigns the files' URLs, so changes reload it rather than using the write's answer.
  const memory = useApi(() => rpc.memories.get.query({ collection: name, id }), [name, id]);
  const remove = useAction();
  const m = memory.data?.id === id ? memory.data : undefined;

  return (
    <>
      <nav aria-label="Breadcrumb" className="muted" style={{ marginBottom: '0.3rem' }}>
        <Link to="/collections">Collections</Link> / <Link to={`/collections/${seg(name)}`}>{name}</Link> / memory
      </nav>
      <h1>
        Memory
        {m?.pinned && <span className="badge">pinned</span>}
        {m?.archived && <span className="badge warn">archived</span>}
        {m && <StateBadge memory={m} />}
        {m && <TrustBadge trust={m.trust} />}
        {m?.quarantine && <span className={m.quarantine.state === 'released' ? 'badge' : 'badge warn'}>{m.quarantine.state}</span>}
      </h1>
      <ErrorNote error={memory.error} />
      {memory.loading && !m && <Busy label="Loading the memory…" />}
      {m && (
        <>
          <p className="card" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word', fontSize: '1.05rem' }}>
            {m.text}
          </p>
          {canWrite && <MemoryFlagButtons memory={m} onChanged={memory.reload} />}
          <h2>Details</h2>
          <dl style={{ display: 'grid', gridTemplateColumns: 'max-content 1fr', gap: '0.25rem 1rem', margin: 0 }}>
            <Detail term="Importance">{m.importance}</Detail>
            <Detail term="Category">{m.category}</Detail>
            <Detail term="Source">{m.source}</Detail>
            <Detail term="Container tag">{m.container_tag ?? <span className="muted">none</span>}</Detail>
            <Detail term="Created by">{m.created_by.label ?? <span className="muted">unknown</span>}</Detail>
            {memoryTimeRows(m).map(([term, value]) => (
              <Detail key={term} term={term}>
                {value}
              </Detail>
            ))}
            <Detail term="Pinned">{m.pinned ? 'yes' : 'no'}</Detail>
            <Detail term="Archived">{m.archived ? 'yes' : 'no'}</Detail>
            <Detail term="Id">
              <code style={{ wordBreak: 'break-all' }}>{m.id}</code>
            </Detail>
          </dl>
          <h2>Metadata</h2>
          {Object.keys(m.metadata).length ? <pre aria-label="Metadata">{JSON.stringify(m.metadata, null, 2)}</pre> : <p className="muted">No metadata.</p>}
          <MemoryTrust memory={m} />
          <MemoryProvenance memory={m} />
          {me?.key.role === 'admin' && <MemoryGivenTo collection={name} id={id} />}
          <MemoryImages images={m.images} />
          <MemoryRelated collection={name} id={id} />
          <MemorySupersession key={m.updated_at} collection={name} id={id} />
          {canWrite && <MemoryPropose memory={m} />}
          {canWrite && <MemoryRetract key={`retract-${m.updated_at}`} memory={m} onChanged={memory.reload} />}
          {canWrite && (
            <>
              <MemoryEditForm key={m.updated_at} memory={m} onSaved={memory.reload} />
              <h2>Delete</h2>
              <ConfirmButton
                label="Delete memory"
                title="Delete this memory?"
                confirmLabel="Delete"
                disabled={remove.busy}
                onConfirm={async () => {
                  const done = await remove.run(() => rpc.memories.delete.mutate({ collection: name, id }));
                  if (done !== undefined) navigate(`/collections/${seg(name)}`);
                }}
              >
                <p>The memory and its attached files are deleted for good. Archive it instead to only hide it.</p>
              </ConfirmButton>
              {remove.busy && <Busy label="Deleting…" />}
              <ErrorNote error={remove.error} />
            </>
          )}
        </>
      )}
    </>
  );
}

function Detail({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt className="muted">{term}</dt>
      <dd style={{ margin: 0 }}>{children}</dd>
    </>
  );
}
