/**
 * Unanswered reviews end as expired and fail closed. Two layers:
 *
 * 1. Correctness, with no timer: ./state.ts `effectiveStatus` treats an open item past its
 *    deadline as expired for every reader and writer, and the store's UPDATEs repeat the
 *    deadline condition against the receipt's signed recorded_at. An expired action can never
 *    be approved, whether or not anything below has run.
 * 2. Evidence: an expiry receipt (kind review, decision expired) is sealed through the one
 *    pipeline, by the first POST /v1/reviews that touches the item after its deadline, or by
 *    the background sweep, whichever comes first. `onSealed` re-checks inside the transaction,
 *    so racing attempts commit exactly one receipt.
 *
 * GET requests never seal: they stay safe and idempotent (RFC 9110 §9.2.1) and show the lazy
 * status instead.
 */
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import type { TenantStore } from '../account/store.ts';
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import { errorFields } from '../core/log.ts';
import { SEALED } from '../evidence/sealed-response.ts';
import type { SealPipeline } from '../evidence/sealer.ts';
import type { EvidenceStore } from '../evidence/store.ts';
import { nextStepFor } from './state.ts';
import type { ReviewItem, ReviewStore } from './store.ts';

export interface ExpiryDeps {
  sealer: SealPipeline;
  store: { reviews: ReviewStore; evidence: EvidenceStore; tenants: Pick<TenantStore, 'getTenant'> };
  clock: Clock;
  log: Logger;
}

/** The actor an expiry receipt is sealed for: the service, not an API key. */
const EXPIRY_ACTOR = 'service:review-expiry';

/** Items sealed per sweep round; they group-commit into one transaction. */
export const SWEEP_BATCH = 100;
/** Rounds per tick, so one tick is bounded even with a large backlog. */
const SWEEP_MAX_ROUNDS = 10;

class AlreadySettled extends Error {
  constructor() {
    super('review item is no longer open, or its window has not ended');
    this.name = 'AlreadySettled';
  }
}

/**
 * Seals the expiry receipt of an open item whose window has ended; does nothing for any other
 * item. Returns the item as stored afterwards.
 */
export async function expireReview(deps: ExpiryDeps, item: ReviewItem): Promise<ReviewItem> {
  const { reviews } = deps.store;
  const tenant = await deps.store.tenants.getTenant(item.tenantId);
  const gate = await deps.store.evidence.findRecord(item.tenantId, item.actionKey);
  if (!tenant || !gate) throw new Error(`review item ${item.actionKey} has no tenant or gate record`);
  // The service generated this payload and holds all of it, so it is committed whole: anyone
  // recomputes payload_hash from context.payload.
  const payload = {
    pack: item.pack,
    action_key: item.actionKey,
    decision: 'expired',
    reviewer: null,
    expires_at: item.expiresAt,
    window_seconds: item.windowSeconds,
  };
  try {
    await deps.sealer.seal({
      auth: { tenantId: item.tenantId, tenantKind: tenant.kind, keyId: EXPIRY_ACTOR },
      vertical: item.vertical,
      actionType: 'review',
      pack: item.pack,
      kind: 'review',
      decision: 'expired',
      status: 'expired',
      reviewRoute: null,
      payloadHash: sha256Hex(canonicalBytes(payload)),
      manifestDigest: null,
      policyDigest: null,
      context: {
        reviewed_action_key: item.actionKey,
        reviewed_attestation_hash: gate.attestationHash,
        reviewed_decision: gate.decision,
        reviewed_review_route: item.reviewRoute,
        review_expires_at: item.expiresAt,
        ended_by: 'review-window',
        payload,
      },
      details: {
        action_type: 'review',
        reviewed_action_key: item.actionKey,
        reviewer: null,
        review_status: 'expired',
        next_step: nextStepFor(item, 'expired'),
      },
      metering: { counted: false, credits: 0 },
      onSealed: async (record, tx) => {
        if (!(await tx.reviews.expire(item.tenantId, item.actionKey, record.recordedAt, record.actionKey))) throw new AlreadySettled();
        await tx.reviews.addReceipt({
          receiptActionKey: record.actionKey,
          tenantId: item.tenantId,
          reviewedActionKey: item.actionKey,
          decision: 'expired',
          reviewer: null,
          recordedAt: record.recordedAt,
        });
      },
      respond: { template: { action_key: SEALED.actionKey } },
    });
  } catch (err) {
    if (!(err instanceof AlreadySettled)) throw err;
  }
  return (await reviews.findItem(item.tenantId, item.actionKey))!;
}

/** One sweep: seals the expiry receipts of every item due now (bounded); returns how many. */
export async function sweepExpiredReviews(deps: ExpiryDeps): Promise<number> {
  let sealed = 0;
  for (let round = 0; round < SWEEP_MAX_ROUNDS; round++) {
    const due = await deps.store.reviews.listDue(rfc3339(deps.clock.now()), SWEEP_BATCH);
    const results = await Promise.all(
      due.map((item) =>
        expireReview(deps, item).then(
          (after) => after.status === 'expired',
          (err: unknown) => {
            deps.log.error('review expiry failed', { action_key: item.actionKey, ...errorFields(err) });
            return false;
          },
        ),
      ),
    );
    sealed += results.filter(Boolean).length;
    // A short or failing round means nothing more is due that this tick can settle.
    if (due.length < SWEEP_BATCH || results.some((ok) => !ok)) break;
  }
  return sealed;
}

/** Background sweep interval: a minute, or a quarter of a short window (at least a second). */
export function sweepIntervalMs(windowSeconds: number): number {
  return Math.min(60_000, Math.max(1_000, Math.floor((windowSeconds * 1000) / 4)));
}
