import { PromotionList } from './PromotionList.tsx';

/** The Review page's promotions (docs/promotion.md): what the caller reviews, and what they proposed. */
export function PromotionSection() {
  return (
    <section aria-labelledby="promotions" className="card stack">
      <h2 id="promotions" style={{ margin: 0 }}>
        Promotions
      </h2>
      <p className="muted" style={{ margin: 0 }}>
        Memories a person proposes from their personal collection to a team or org collection wait here for its reviewers: an admin of its teams, or of the
        organization. Accepting copies them there.
      </p>
      <PromotionList as="reviewer" />
      <PromotionList as="proposer" />
    </section>
  );
}
