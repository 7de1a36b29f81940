/**
 * Review context: what the employee's browser may seal to whom, and what a reviewer may fetch
 * (RFC 9180 HPKE; shared/hpke.ts does the cryptography in the browsers, never here).
 *
 * - Recipients of a paused action are every active device key of every active person who holds
 *   reviews:decide. Routes name channels, not people, so nobody narrower may decide an item.
 * - Only the principal that submitted the paused gate request may read the recipients, post
 *   ciphertexts or withdraw them: the record's key, or the person behind that key.
 * - Only while the review is open: after a decision, the expiry or the end of the window there is
 *   nothing to post or fetch (the ciphertexts are erased with the seal that ended it:
 *   ./participant.ts; and by ./sweep.ts).
 * - Only when the tenant policy for the item's pack and action type says "encrypted"
 *   (policy/document.ts reviewContextMode), read from the current policy version.
 */
import type { AuthContext } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import type { SealedRecordRow } from '../evidence/store.ts';
import { reviewContextMode } from '../policy/document.ts';
import type { PolicyDocument, ReviewContextMode } from '../policy/document.ts';
import { notOpen } from '../reviews/refusals.ts';
import { effectiveStatus, isOpen } from '../reviews/state.ts';
import type { ReviewItem } from '../reviews/store.ts';
import type { Store } from '../core/stores.ts';
import type { ReviewKeyRow } from './store.ts';

export type ContextStatus = 'available' | 'not_shared' | 'expired';

export interface ContextDeps {
  store: Pick<Store, 'reviews' | 'evidence' | 'policy' | 'account' | 'reviewContexts'>;
  clock: { now(): Date };
}

export interface PausedAction {
  item: ReviewItem;
  record: SealedRecordRow;
}

/** The paused action of this tenant, or 404 (another tenant's answers the same). */
export async function findPaused(deps: ContextDeps, tenantId: string, actionKey: string): Promise<PausedAction> {
  const item = await deps.store.reviews.findItem(tenantId, actionKey);
  const record = item && (await deps.store.evidence.findRecord(tenantId, actionKey));
  if (!item || !record) throw ProblemError.notFound('no paused action with this action_key for this tenant');
  return { item, record };
}

/** 409 review_not_pending unless the item's review is open now. */
export function assertOpen(deps: ContextDeps, item: ReviewItem): void {
  const now = rfc3339(deps.clock.now());
  if (!isOpen(effectiveStatus(item, now))) throw notOpen(item, now);
}

/**
 * Whether the caller is who submitted the paused gate request: the same principal (any of its
 * credentials: the extension's key, the person's session), or, for a request no principal made,
 * the same credential. Recorded in the gate seal's transaction (./participant.ts).
 */
export async function assertSubmitter(deps: ContextDeps, auth: AuthContext, item: ReviewItem): Promise<void> {
  const submitter = await deps.store.reviewContexts.findSubmitter(item.tenantId, item.actionKey);
  if (submitter) {
    if (submitter.principalId !== null && submitter.principalId === auth.principal?.id) return;
    if (submitter.principalId === null && submitter.credentialId !== null && submitter.credentialId === auth.credentialId) return;
  }
  throw new ProblemError({
    status: 403,
    code: 'review_context_not_submitter',
    detail: 'only the principal that submitted the paused gate request may share or withdraw its review context',
  });
}

/** The tenant policy's review context mode for this item (current version; none: off). */
export async function policyMode(deps: ContextDeps, item: ReviewItem): Promise<ReviewContextMode> {
  const current = await deps.store.policy.current(item.tenantId, item.pack);
  if (!current) return 'off';
  return reviewContextMode(JSON.parse(current.document) as PolicyDocument, item.actionType);
}

/** Every active device key of every active person holding reviews:decide, oldest first. */
export async function recipientKeys(deps: ContextDeps, tenantId: string): Promise<ReviewKeyRow[]> {
  const principals = await deps.store.account.listPrincipals(tenantId);
  const deciders = new Set(principals.filter((p) => p.kind === 'person' && p.status === 'active' && p.capabilities.includes('reviews:decide')).map((p) => p.id));
  return (await deps.store.reviewContexts.activeKeys(tenantId)).filter((k) => deciders.has(k.personId));
}

/** What the board says of one item's context: `held` is how many ciphertexts are stored for it. */
export function contextStatus(item: ReviewItem, now: string, held: number): ContextStatus {
  if (!isOpen(effectiveStatus(item, now))) return 'expired';
  return held > 0 ? 'available' : 'not_shared';
}

/** contextStatus for several items of one tenant at once (the board). */
export async function contextStatuses(deps: ContextDeps, tenantId: string, items: readonly ReviewItem[]): Promise<Map<string, ContextStatus>> {
  const now = rfc3339(deps.clock.now());
  const held = await deps.store.reviewContexts.countContexts(tenantId, items.map((i) => i.actionKey));
  return new Map(items.map((i) => [i.actionKey, contextStatus(i, now, held.get(i.actionKey) ?? 0)]));
}
