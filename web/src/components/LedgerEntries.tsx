import { rpc } from '../api.ts';
import { CursorPager, useCursorPages } from './CursorPager.tsx';
import { LedgerEntryCard } from './LedgerEntryCard.tsx';
import { ledgerQuery, type LedgerFilters } from './LedgerFilterForm.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useApi } from './use-api.ts';

/** Entries a page shows. */
const PAGE = 25;

/**
 * The ledger's entries for one set of filters, newest first, a page at a time; and how many
 * entries the service could not write, as a gap is counted rather than silent. The caller keys it
 * by the filters, so new filters start again at the newest page.
 */
export function LedgerEntries({ filters }: { filters: LedgerFilters }) {
  const pages = useCursorPages();
  const ledger = useApi(() => rpc.ledger.list.query({ ...ledgerQuery(filters), limit: PAGE, cursor: pages.cursor }), [pages.cursor]);
  const page = ledger.data;
  return (
    <section aria-labelledby="ledger-entries">
      <h2 id="ledger-entries">Entries</h2>
      <ErrorNote error={ledger.error} />
      {ledger.loading && !page && <Busy label="Loading the ledger…" />}
      {page && page.dropped > 0 && (
        <p className="error" data-testid="ledger-dropped">
          {page.dropped.toLocaleString()} {page.dropped === 1 ? 'entry' : 'entries'} could not be written (the last on {when(page.last_dropped_at)}): the ledger
          is missing them.
        </p>
      )}
      {page && page.entries.length === 0 && <p className="muted">No entries{pages.page === 1 ? ' match these filters' : ' more'}.</p>}
      {page && page.entries.length > 0 && (
        <ol aria-label="Ledger entries" className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {page.entries.map((e) => (
            <LedgerEntryCard key={e.id} entry={e} />
          ))}
        </ol>
      )}
      {page && <CursorPager pages={pages} next={page.next} label="Ledger pages" />}
    </section>
  );
}
