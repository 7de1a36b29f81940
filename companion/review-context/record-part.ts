/**
 * The `review_context` member of GET /v1/records/{action_key} for a paused gate action (handed
 * in by app.ts like the reviews capability's `review` part, evidence/routes.ts RecordPart):
 * whether its context is available to the reviewers' devices, not shared, or gone with the end
 * of the review, and what the tenant policy says for it now. Ciphertexts are never part of it.
 */
import { rfc3339 } from '../core/clock.ts';
import { z } from '../core/router.ts';
import type { RecordPart } from '../evidence/routes.ts';
import { contextStatus, policyMode } from './context.ts';
import { ContextStatus } from './schema.ts';

export const RecordReviewContext = z
  .object({
    status: ContextStatus,
    policy: z.enum(['encrypted', 'off']).openapi({ description: "The tenant policy's review_context for this action type now" }),
    ciphertexts: z.number().int().openapi({ description: 'How many reviewer devices it was sealed to (held while the review is open)' }),
  })
  .openapi('RecordReviewContext');

export const reviewContextRecordPart: RecordPart = {
  name: 'review_context',
  schema: RecordReviewContext,
  async view(deps, row) {
    if (row.kind !== 'gate' || row.decision !== 'needs_review') return undefined;
    const item = await deps.store.reviews.findItem(row.tenantId, row.actionKey);
    if (!item) return undefined;
    const held = (await deps.store.reviewContexts.countContexts(row.tenantId, [row.actionKey])).get(row.actionKey) ?? 0;
    return { status: contextStatus(item, rfc3339(deps.clock.now()), held), policy: await policyMode(deps, item), ciphertexts: held };
  },
};
