/**
 * The reviews capability's part of every seal: a paused (needs_review) action gets its review
 * item in the seal's own transaction, so no paused action is ever missing from the board and
 * no item exists without its sealed decision (interface-spec States and transitions).
 */
import type { SealParticipant } from '../evidence/participants.ts';
import { openReviewItem } from './state.ts';
import type { ReviewRule } from './rules.ts';
import type { ReviewStore } from './store.ts';

export function reviewsParticipant(reviews: ReviewStore): SealParticipant {
  return {
    name: 'reviews',
    sealed({ request, record }) {
      const pause = request.pauseForReview;
      if (!pause) return;
      openReviewItem(reviews, record, { actionType: pause.actionType, reviewRoute: request.reviewRoute, nextStep: pause.nextStep, rule: pause.rule as ReviewRule | null }, pause.windowSeconds);
    },
  };
}
