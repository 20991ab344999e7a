import { useParams, useSearchParams } from 'react-router';
import { CollectionDelete } from '../components/CollectionDelete.tsx';
import { CollectionNav } from '../components/CollectionNav.tsx';
import { MemoryAddForm } from '../components/MemoryAddForm.tsx';
import { MemoryFilterForm } from '../components/MemoryFilterForm.tsx';
import { MemoryListItem } from '../components/MemoryListItem.tsx';
import { loadMemoryListPage, memoryFiltersFrom, memoryFiltersToParams, type MemoryListFilters } from '../components/MemoryListQuery.ts';
import { Busy, ErrorNote } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** A collection's memories: filters, pinned first, paging; writing keys add, pin and archive, and delete the collection. */
export function CollectionMemories() {
  const name = useParams().name!;
  const { canWrite } = useSession();
  const [params, setParams] = useSearchParams();
  const filters = memoryFiltersFrom(params);
  const search = params.toString();
  const list = useApi(() => loadMemoryListPage(name, filters), [name, search]);
  const go = (f: MemoryListFilters) => setParams(memoryFiltersToParams(f));
  const page = list.data;
  const first = filters.offset + 1;

  return (
    <>
      <CollectionNav name={name} />
      {canWrite && <MemoryAddForm collection={name} onAdded={list.reload} />}
      <h2>Memories</h2>
      {/* Keyed on the URL so Back/Forward and Clear show the filters in force. */}
      <MemoryFilterForm key={search} filters={filters} onApply={go} />
      <ErrorNote error={list.error} />
      {list.loading && <Busy label="Loading memories…" />}
      {page && (
        <>
          {page.items.length === 0 ? (
            <p className="muted">{filters.offset ? 'No more memories.' : 'No memories match.'}</p>
          ) : (
            <>
              <p className="muted" aria-live="polite">
                Showing {first}–{filters.offset + page.items.length}, pinned first, then newest.
              </p>
              <ul aria-label="Memories" style={{ listStyle: 'none', padding: 0, margin: 0, display: 'grid', gap: '0.6rem' }}>
                {page.items.map((m) => (
                  <MemoryListItem key={m.id} memory={m} canWrite={canWrite} onChanged={list.reload} />
                ))}
              </ul>
            </>
          )}
          <nav aria-label="Pages" className="row" style={{ marginTop: '0.8rem' }}>
            <button type="button" disabled={filters.offset === 0} onClick={() => go({ ...filters, offset: Math.max(0, filters.offset - filters.limit) })}>
              Previous
            </button>
            <button type="button" disabled={!page.hasMore} onClick={() => go({ ...filters, offset: filters.offset + filters.limit })}>
              Next
            </button>
          </nav>
        </>
      )}
      {canWrite && <CollectionDelete name={name} listed={page} />}
    </>
  );
}
