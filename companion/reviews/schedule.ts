/**
 * Reminders and escalation chains of the review rules (./rules.ts), run on a schedule by the
 * review worker (companion/workers.ts), beside the expiry sweep.
 *
 * For each open item whose next reminder or step is due, one transaction re-reads the item and
 * takes what is due: the reminder (a `review.reminder` event) and, in order, every escalation
 * step whose time has come (the item moves to the step's route, the step is recorded, and a
 * `review.escalated` event is raised). Each UPDATE carries the condition on the stored state
 * (reminded_at still null; escalation_level still the previous step), and the events go into
 * the webhook outbox in the same transaction (webhooks/outbox.ts), so each reminder and each
 * step happens exactly once, across rounds, restarts and kill -9 alike: a crash before the
 * commit leaves nothing, and the next round does it again.
 *
 * An item whose window has ended is never reminded or escalated: it has expired (./state.ts).
 */
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import type { Logger } from '../core/log.ts';
import { errorFields } from '../core/log.ts';
import type { Store, Tx } from '../core/stores.ts';
import type { WebhookOutbox } from '../webhooks/outbox.ts';
import type { ReviewEventFields } from '../webhooks/events.ts';
import { nextEscalation, reminderDueAt, scheduleDueAt } from './rules.ts';
import { isOpen } from './state.ts';
import type { ReviewItem } from './store.ts';

export interface ScheduleDeps {
  store: Pick<Store, 'reviews' | 'transaction'>;
  webhooks: { outbox: WebhookOutbox };
  /** Told of each escalation step inside its transaction (`tx`), so the new route is reached (routing/). */
  onEscalated?: (item: ReviewItem, at: string, tx: Tx) => void | Promise<void>;
  clock: Clock;
  log: Logger;
}

/** Items handled per round, each in its own short transaction. */
const SCHEDULE_BATCH = 100;
const SCHEDULE_MAX_ROUNDS = 10;

/** One pass: every reminder and escalation step due now (bounded); returns how many were taken. */
export async function runReviewSchedule(deps: ScheduleDeps): Promise<number> {
  let taken = 0;
  for (let round = 0; round < SCHEDULE_MAX_ROUNDS; round++) {
    const now = rfc3339(deps.clock.now());
    const due = await deps.store.reviews.listScheduled(now, SCHEDULE_BATCH);
    let failed = false;
    for (const item of due) {
      try {
        taken += await deps.store.transaction((tx) => takeDue(deps, tx, item.tenantId, item.actionKey, now));
      } catch (err) {
        failed = true;
        deps.log.error('review schedule failed', { action_key: item.actionKey, ...errorFields(err) });
      }
    }
    if (due.length < SCHEDULE_BATCH || failed) break;
    // Let requests in between batches: the rounds run on the request loop.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return taken;
}

/** Inside one transaction: what is due on this item at `now`, from its stored state. */
async function takeDue(deps: ScheduleDeps, tx: Tx, tenantId: string, actionKey: string, now: string): Promise<number> {
  const { reviews } = tx;
  let item = await reviews.findItem(tenantId, actionKey);
  if (!item || !isOpen(item.status) || Date.parse(item.expiresAt) <= Date.parse(now)) return 0;
  let taken = 0;
  const reminder = reminderDueAt(item);
  if (reminder !== null && Date.parse(reminder) <= Date.parse(now)) {
    const next = scheduleDueAt({ ...item, remindedAt: now });
    if (await reviews.markReminded(tenantId, actionKey, now, next)) {
      await deps.webhooks.outbox.enqueue(
        {
          tenantId,
          event: 'review.reminder',
          eventKey: `review.reminder:${actionKey}`,
          fields: { ...eventFields(item), waiting_seconds: Math.floor((Date.parse(now) - Date.parse(item.createdAt)) / 1000) },
          createdAt: now,
        },
        tx,
      );
      taken++;
    }
    item = (await reviews.findItem(tenantId, actionKey))!;
  }
  for (let step = nextEscalation(item); step && Date.parse(step.dueAt) <= Date.parse(now); step = nextEscalation(item)) {
    const next = scheduleDueAt({ ...item, escalationLevel: step.level });
    if (!(await reviews.escalateRoute(tenantId, actionKey, { level: step.level, route: step.step.route, at: now, scheduleDueAt: next }))) break;
    const from = item.reviewRoute;
    item = (await reviews.findItem(tenantId, actionKey))!;
    await deps.onEscalated?.(item, now, tx);
    await deps.webhooks.outbox.enqueue(
      {
        tenantId,
        event: 'review.escalated',
        eventKey: `review.escalated:${actionKey}:${step.level}`,
        fields: { ...eventFields(item), escalation_level: step.level, from_route: from },
        createdAt: now,
      },
      tx,
    );
    taken++;
  }
  return taken;
}

function eventFields(item: ReviewItem): ReviewEventFields {
  return {
    action_key: item.actionKey,
    action_type: item.actionType,
    review_route: item.reviewRoute,
    record_href: `/v1/records/${item.actionKey}`,
    approvals: item.approvals,
    approvals_required: item.approvalsRequired,
    expires_at: item.expiresAt,
  };
}
