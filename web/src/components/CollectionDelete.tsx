import { useNavigate } from 'react-router';
import { rpc } from '../api.ts';
import { Busy, ConfirmButton, ErrorNote, memories } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

/**
 * collections.delete, at the foot of the collection's own page (writing keys only; the caller
 * leaves it out otherwise): a rare act, kept off the collections list, whose dialog says how
 * many memories go with it. Done, it goes back to the list. A collection that cannot be read
 * shows nothing here: the page above says why. `listed` is the page's memory list: the counts are
 * read again whenever it changes.
 */
export function CollectionDelete({ name, listed }: { name: string; listed: unknown }) {
  const navigate = useNavigate();
  const collection = useApi(() => rpc.collections.get.query({ name }), [name, listed]);
  const remove = useAction();
  const c = collection.data?.name === name ? collection.data : undefined;
  if (!c) return null;
  return (
    <section aria-labelledby="delete-collection-title" style={{ marginTop: '2rem' }}>
      <h2 id="delete-collection-title">Delete this collection</h2>
      <p className="muted">Its memories go with it, archived ones included, and their files.</p>
      <ConfirmButton
        label="Delete collection"
        title={`Delete collection ${name}?`}
        disabled={remove.busy}
        onConfirm={async () => {
          const done = await remove.run(() => rpc.collections.delete.mutate({ name }));
          if (done !== undefined) navigate('/collections');
        }}
      >
        <p>
          This deletes the collection with its {memories(c.memory_count)}
          {c.archived_count > 0 && ` and ${c.archived_count.toLocaleString()} archived`}, and their files. It cannot be undone.
        </p>
      </ConfirmButton>
      {remove.busy && <Busy label="Deleting the collection…" />}
      <ErrorNote error={remove.error} />
    </section>
  );
}
