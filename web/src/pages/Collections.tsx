import { Link, useNavigate } from 'react-router';
import { rpc, seg } from '../api.ts';
import { CollectionCreateForm } from '../components/CollectionCreateForm.tsx';
import { Busy, ConfirmButton, ErrorNote, when } from '../components/ui.tsx';
import { useAction, useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** The collections the key can read (the list answers no others), with their counts; writing keys create and delete them. */
export function Collections() {
  const { canWrite } = useSession();
  const navigate = useNavigate();
  const list = useApi(() => rpc.collections.list.query(), []);
  const remove = useAction();

  return (
    <>
      <h1>Collections</h1>
      <ErrorNote error={list.error ?? remove.error} />
      {list.loading && <Busy label="Loading collections…" />}
      {remove.busy && <Busy label="Deleting the collection…" />}
      {list.data?.length === 0 && (
        <p className="muted">
          No collections yet.{canWrite && ' Create one above, or store a memory through the API: its collection is created on first write.'}
        </p>
      )}
      <ul aria-label="Collections" className="grid" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {list.data?.map((c) => (
          <li key={c.name} className="card">
            <h2 style={{ margin: '0 0 0.3rem', fontSize: '1.05rem', wordBreak: 'break-word' }}>
              <Link to={`/collections/${seg(c.name)}`}>{c.name}</Link>
              {c.restricted && (
                <span className="badge warn" title="Only granted keys can read or write it">
                  restricted
                </span>
              )}
            </h2>
            <p style={{ margin: '0 0 0.3rem' }}>
              <strong>{c.memory_count.toLocaleString()}</strong> {c.memory_count === 1 ? 'memory' : 'memories'}
            </p>
            {c.description && <p style={{ margin: '0 0 0.3rem' }}>{c.description}</p>}
            <p className="muted" style={{ margin: '0 0 0.5rem', fontSize: '0.85rem' }}>
              Updated {when(c.updated_at)}
            </p>
            {canWrite && (
              <ConfirmButton
                label={`Delete ${c.name}`}
                title={`Delete collection ${c.name}?`}
                confirmLabel="Delete collection"
                disabled={remove.busy}
                onConfirm={async () => {
                  const done = await remove.run(() => rpc.collections.delete.mutate({ name: c.name }));
                  if (done !== undefined) list.reload();
                }}
              >
                <p>
                  This deletes the collection with all its {c.memory_count.toLocaleString()} {c.memory_count === 1 ? 'memory' : 'memories'} and their files. It
                  cannot be undone.
                </p>
              </ConfirmButton>
            )}
          </li>
        ))}
      </ul>
      {canWrite && <CollectionCreateForm onCreated={(name) => navigate(`/collections/${seg(name)}`)} />}
    </>
  );
}
