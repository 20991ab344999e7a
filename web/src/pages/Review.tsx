import { useCallback, useState } from 'react';
import { useSearchParams } from 'react-router';
import { rpc } from '../api.ts';
import { QuarantineList } from '../components/QuarantineList.tsx';
import { QuarantinePolicy } from '../components/QuarantinePolicy.tsx';
import { ReviewChangeset } from '../components/ReviewChangeset.tsx';
import { ReviewChangesets } from '../components/ReviewChangesets.tsx';
import { ReviewSettings } from '../components/ReviewSettings.tsx';
import { PromotionSection } from '../components/PromotionSection.tsx';
import { ErrorNote } from '../components/ui.tsx';
import { useApi } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/**
 * What waits for a person's decision: in one collection, the change sets consolidation runs
 * propose and the collection's consolidation settings; across the tenant, the promotions the
 * person reviews or proposed (docs/promotion.md), the memories held in
 * quarantine (admin keys only) and the quarantine policy. The collection and the opened change set
 * are kept in the page address, so each is a page of its own.
 */
export function Review() {
  const { me, canAdmin } = useSession();
  const [params, setParams] = useSearchParams();
  const collection = params.get('collection') ?? '';
  const opened = params.get('changeset');
  const collections = useApi(() => rpc.collections.list.query(), []);
  // Bumped when a change of the opened change set is decided: the list's counts follow.
  const [version, setVersion] = useState(0);
  const changed = useCallback(() => setVersion((v) => v + 1), []);
  const open = (id: string | null) => setParams(id ? { collection, changeset: id } : { collection });

  return (
    <>
      <h1>Review</h1>
      <p className="muted">
        Changes proposed for a collection and memories held in {me?.key.role === 'admin' ? <a href="#quarantine">quarantine</a> : 'quarantine'} wait here until
        someone decides.
        {!canAdmin &&
          ' Applying, rejecting or undoing changes, changing the consolidation settings or the quarantine policy, and seeing the quarantine need an admin key.'}
      </p>
      <ErrorNote error={collections.error} />
      <form aria-label="Collection to review" onSubmit={(e) => e.preventDefault()}>
        <div className="field" style={{ maxWidth: '24rem' }}>
          <label htmlFor="review-collection">Collection</label>
          <select id="review-collection" value={collection} onChange={(e) => setParams(e.target.value ? { collection: e.target.value } : {})}>
            <option value="">Pick a collection</option>
            {/* A collection from the address that the list does not hold still shows (the service will say why). */}
            {[...new Set([...(collections.data ?? []).map((c) => c.name), ...(collection ? [collection] : [])])].map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </div>
      </form>
      {collection && (
        <div className="stack" style={{ marginTop: '1rem' }}>
          <ReviewChangesets key={collection} collection={collection} opened={opened} version={version} onOpen={open} />
          {opened && <ReviewChangeset key={`${collection}/${opened}`} collection={collection} id={opened} onChanged={changed} />}
          <ReviewSettings key={`settings/${collection}`} collection={collection} />
        </div>
      )}
      <div className="stack" style={{ marginTop: '1rem' }}>
        <PromotionSection />
        {/* The service lists the quarantine to admin keys only, read-only ones included. */}
        {me?.key.role === 'admin' && <QuarantineList />}
        <QuarantinePolicy />
      </div>
    </>
  );
}
