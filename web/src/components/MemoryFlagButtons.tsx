import type { Memory } from '../../../src/schemas/memory.ts';
import { rpc } from '../api.ts';
import { ConfirmButton, ErrorNote } from './ui.tsx';
import { useAction } from './use-api.ts';

/** Pin/unpin and archive/restore of one memory, for writing keys (the caller leaves it out for read-only ones). */
export function MemoryFlagButtons({ memory, onChanged }: { memory: Memory; onChanged: (m: Memory) => void }) {
  const { busy, error, run } = useAction();
  const at = { collection: memory.collection, id: memory.id };
  const flag = async (what: 'pin' | 'archive', value: boolean) => {
    const changed = await run(() =>
      what === 'pin' ? rpc.memories.pin.mutate({ ...at, pinned: value }) : rpc.memories.archive.mutate({ ...at, archived: value }),
    );
    if (changed) onChanged(changed);
  };
  return (
    <>
      <div className="row">
        <button type="button" disabled={busy} onClick={() => void flag('pin', !memory.pinned)}>
          {memory.pinned ? 'Unpin' : 'Pin'}
        </button>
        {memory.archived ? (
          <button type="button" disabled={busy} onClick={() => void flag('archive', false)}>
            Restore
          </button>
        ) : (
          // Archiving hides the memory from the default list and from search: asked first, undone by Restore.
          <ConfirmButton label="Archive" title="Archive this memory?" disabled={busy} onConfirm={() => flag('archive', true)}>
            <p>It leaves the default list and search results. It is kept, and can be restored from the list with “Archived: include”.</p>
          </ConfirmButton>
        )}
      </div>
      <ErrorNote error={error} />
    </>
  );
}
