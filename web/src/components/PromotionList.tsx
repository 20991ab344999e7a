import { useState } from 'react';
import { rpc } from '../api.ts';
import { useSession } from '../session.tsx';
import { CursorPager, useCursorPages } from './CursorPager.tsx';
import { PromotionItem } from './PromotionItem.tsx';
import { Busy, ErrorNote } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

const PAGE = 10;

const VIEWS = {
  reviewer: { title: 'To review', empty: 'Nothing is proposed to a collection you review.', state: 'proposed' as const },
  proposer: { title: 'Your proposals', empty: 'You have proposed nothing.', state: undefined },
};

/**
 * The promotions of one side (docs/promotion.md): as a reviewer, what waits for a decision on the
 * collections the caller reviews; as a proposer, their own proposals in every state. The service
 * decides who sees what; a writable key acts on them.
 */
export function PromotionList({ as }: { as: 'reviewer' | 'proposer' }) {
  const { canWrite } = useSession();
  const view = VIEWS[as];
  const pages = useCursorPages();
  const list = useApi(() => rpc.promotions.list.query({ as, state: view.state, limit: PAGE, cursor: pages.cursor }), [as, pages.cursor]);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);

  async function act(word: string, call: () => Promise<{ to_collection: string }>) {
    setDone(null);
    const p = await action.run(call);
    // Also after a refusal: someone else may have decided it meanwhile, and the list shows it as it is now.
    list.reload();
    if (p) setDone(`${word}: the promotion to ${p.to_collection}`);
  }
  const id = `promotions-${as}`;
  return (
    <section aria-labelledby={id} className="stack">
      <h3 id={id} style={{ margin: 0 }}>
        {view.title}
      </h3>
      {done && (
        <p className="ok" role="status">
          {done}
        </p>
      )}
      <ErrorNote error={action.error} />
      <ErrorNote error={list.error} />
      {!list.data && !list.error && <Busy label="Loading the promotions…" />}
      {list.data && list.data.promotions.length === 0 && <p className="muted">{pages.page === 1 ? view.empty : 'No more promotions.'}</p>}
      {list.data && list.data.promotions.length > 0 && (
        <ol aria-label={view.title} className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {list.data.promotions.map((p) => (
            <li key={p.id}>
              <PromotionItem
                promotion={p}
                actions={{
                  busy: action.busy,
                  ...(canWrite && as === 'reviewer'
                    ? {
                        accept: () => void act('Accepted', () => rpc.promotions.accept.mutate({ id: p.id })),
                        reject: (reason: string) => void act('Rejected', () => rpc.promotions.reject.mutate({ id: p.id, reason })),
                      }
                    : {}),
                  ...(canWrite && as === 'proposer' ? { withdraw: () => void act('Withdrawn', () => rpc.promotions.withdraw.mutate({ id: p.id })) } : {}),
                }}
              />
            </li>
          ))}
        </ol>
      )}
      <CursorPager pages={pages} next={list.data?.next} label={`${view.title} pages`} />
    </section>
  );
}
