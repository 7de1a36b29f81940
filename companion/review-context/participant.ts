/**
 * The review-context capability's part of every seal. A gate seal that pauses its action records
 * who submitted it (the principal and credential), so only they may later share or withdraw its
 * review context (./context.ts). A review receipt that ends an action's
 * review (its final approval, a rejection, or the expiry) erases the context ciphertexts held
 * for that action in the seal's own transaction, so no decided or expired action keeps them
 * for a moment longer, and a seal that rolls back (a concurrent decision won) erases nothing.
 *
 * The receipt says how the review stands after it (details.review_status, set by
 * reviews/seal-review.ts and reviews/expiry.ts); an escalation or an approval short of the
 * rule's count leaves the review open, and the context with it.
 */
import { syncOf } from '../core/async-store.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import type { SealRequest } from '../evidence/sealer.ts';

const REVIEW_ENDED = new Set(['approved', 'rejected', 'expired']);

/** The action whose review this seal ends, if it ends one. */
export function reviewEndedBy(request: Pick<SealRequest, 'kind' | 'context' | 'details'>): string | undefined {
  if (request.kind !== 'review') return undefined;
  const reviewed = request.context?.reviewed_action_key;
  return typeof reviewed === 'string' && REVIEW_ENDED.has(String(request.details.review_status)) ? reviewed : undefined;
}

export function reviewContextParticipant(): SealParticipant {
  return {
    name: 'review-context',
    sealed({ request, record }, tx) {
      const { auth } = request;
      if (request.pauseForReview) {
        const submitter = { tenantId: auth.tenantId, actionKey: record.actionKey, principalId: auth.principal?.id ?? null, credentialId: auth.credentialId ?? null };
        const contexts = syncOf(tx.reviewContexts);
        if (!contexts) return tx.reviewContexts.recordSubmitter(submitter);
        return contexts.recordSubmitter(submitter);
      }
      const ended = reviewEndedBy(request);
      if (ended !== undefined) return tx.reviewContexts.forgetAction(auth.tenantId, ended);
    },
  };
}
