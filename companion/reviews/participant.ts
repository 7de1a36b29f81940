/**
 * The reviews capability's part of every seal: a paused (needs_review) action gets its review
 * item in the seal's own transaction, so no paused action is ever missing from the board and
 * no item exists without its sealed decision (interface-spec States and transitions).
 */
import { syncOf } from '../core/async-store.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import { newReviewItem } from './state.ts';
import type { ReviewRule } from './rules.ts';

export function reviewsParticipant(): SealParticipant {
  return {
    name: 'reviews',
    sealed({ request, record }, tx) {
      const pause = request.pauseForReview;
      if (!pause) return;
      const item = newReviewItem(record, { actionType: pause.actionType, reviewRoute: request.reviewRoute, nextStep: pause.nextStep, rule: pause.rule as ReviewRule | null }, pause.windowSeconds);
      const reviews = syncOf(tx.reviews);
      if (!reviews) return tx.reviews.openItem(item);
      reviews.openItem(item);
    },
    // The board's insights memo (./sqlite-store.ts) forgets a tenant whose item opened elsewhere.
    async committedElsewhere(request, store) {
      if (request.pauseForReview) await store.reviews.itemsChangedElsewhere(request.auth.tenantId);
    },
  };
}
