/**
 * The Dexie log of decisions: action_key, decision, site, time, verified and
 * the review outcome; never prompt text. Exported as JSON from the popup and options page.
 */
import type { DecisionEntry, ExtensionDatabase, IncidentEntry, ReviewReceiptEntry, ReviewStatus } from '../db.ts';
import type { LogExport } from '../messages.ts';

export class DecisionLog {
  constructor(private readonly db: ExtensionDatabase) {}

  /**
   * A retried gate call returns the original decision; the first entry's release and review
   * state are kept. With `releaseTo`, the release is claimed for that attempt in the same
   * transaction (see claimRelease); the answer says whether it was.
   */
  async recordDecision(entry: DecisionEntry, releaseTo: string | null = null): Promise<boolean> {
    return this.db.transaction('rw', this.db.decisions, async () => {
      const existing = await this.db.decisions.get(entry.action_key);
      const releasedTo = existing ? existing.released_attempt : null;
      const released = releaseTo !== null && (releasedTo === null || releasedTo === releaseTo);
      await this.db.decisions.put(
        existing
          ? {
              ...entry,
              released_attempt: existing.released_attempt,
              review_status: existing.review_status ?? entry.review_status,
              reviewer: existing.reviewer,
              review_receipt_key: existing.review_receipt_key,
              review_verified: existing.review_verified,
              review_time: existing.review_time,
            }
          : entry,
      );
      if (released && releasedTo === null) await this.db.decisions.update(entry.action_key, { released_attempt: releaseTo });
      return released;
    });
  }

  async get(actionKey: string): Promise<DecisionEntry | undefined> {
    return this.db.decisions.get(actionKey);
  }

  /**
   * Claims the one release of a held action for `attemptId`. True for the first claim and for a
   * repeat by the same attempt (its answer may have been lost when the worker stopped); false
   * for any other attempt, so two tabs or a replayed message can never send it twice.
   */
  async claimRelease(actionKey: string, attemptId: string): Promise<boolean> {
    return this.db.transaction('rw', this.db.decisions, async () => {
      const entry = await this.db.decisions.get(actionKey);
      if (entry === undefined) return false;
      if (entry.released_attempt !== null) return entry.released_attempt === attemptId;
      await this.db.decisions.update(actionKey, { released_attempt: attemptId });
      return true;
    });
  }

  /** Records what a release came to; only the attempt that holds the release may report it. */
  async recordRelease(actionKey: string, attemptId: string, outcome: { sent: boolean; evidence: string | null; time: string }): Promise<boolean> {
    return this.db.transaction('rw', this.db.decisions, async () => {
      const entry = await this.db.decisions.get(actionKey);
      if (entry === undefined || entry.released_attempt !== attemptId) return false;
      await this.db.decisions.update(actionKey, { release_outcome: outcome });
      return true;
    });
  }

  async recordReview(
    actionKey: string,
    review: { status: ReviewStatus; reviewer: string | null; receiptKey: string | null; verified: boolean | null; time: string },
  ): Promise<void> {
    await this.db.decisions.update(actionKey, {
      review_status: review.status,
      reviewer: review.reviewer,
      review_receipt_key: review.receiptKey,
      review_verified: review.verified,
      review_time: review.time,
    });
  }

  async recordIncident(incident: IncidentEntry): Promise<void> {
    await this.db.incidents.add(incident);
  }

  async recordReviewReceipt(entry: ReviewReceiptEntry): Promise<void> {
    await this.db.reviewReceipts.put(entry);
  }

  async recent(limit = 20): Promise<DecisionEntry[]> {
    return this.db.decisions.orderBy('time').reverse().limit(limit).toArray();
  }

  async recentReviews(limit = 10): Promise<ReviewReceiptEntry[]> {
    return this.db.reviewReceipts.orderBy('time').reverse().limit(limit).toArray();
  }

  async recentIncidents(limit = 10): Promise<IncidentEntry[]> {
    return this.db.incidents.orderBy('time').reverse().limit(limit).toArray();
  }

  async export(now: Date): Promise<LogExport> {
    return {
      format: 'action-gate.extension-log/v1',
      exported_at: now.toISOString(),
      decisions: await this.db.decisions.orderBy('time').toArray(),
      incidents: await this.db.incidents.orderBy('time').toArray(),
      review_receipts: await this.db.reviewReceipts.orderBy('time').toArray(),
      pinned_keys: await this.db.pinnedKeys.toArray(),
      key_alarms: await this.db.keyAlarms.orderBy('time').toArray(),
    };
  }
}
