import { useState } from 'react';

/**
 * Paging through a list the API answers a page at a time with the cursor of the next (older)
 * page: the cursors of the pages walked through are kept, as the API does not page back.
 */
export function useCursorPages() {
  const [trail, setTrail] = useState<Array<string | undefined>>([undefined]);
  return {
    cursor: trail[trail.length - 1],
    page: trail.length,
    older: (next: string) => setTrail((t) => [...t, next]),
    newer: () => setTrail((t) => (t.length > 1 ? t.slice(0, -1) : t)),
    first: () => setTrail([undefined]),
  };
}

/** Newer and Older buttons around the page number; Older only while the API names a next page. */
export function CursorPager({ pages, next, label }: { pages: ReturnType<typeof useCursorPages>; next: string | null | undefined; label: string }) {
  if (pages.page === 1 && !next) return null;
  return (
    <nav aria-label={label} className="row" style={{ marginTop: '0.6rem' }}>
      <button type="button" onClick={pages.newer} disabled={pages.page === 1}>
        Newer
      </button>
      <span className="muted">Page {pages.page}</span>
      <button type="button" onClick={() => next && pages.older(next)} disabled={!next}>
        Older
      </button>
    </nav>
  );
}
