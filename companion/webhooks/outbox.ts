/**
 * Enqueueing event deliveries (interface-spec Events rules 1–2). Called inside the transaction
 * of the event's cause (the seal, the epoch, the failed verification), so a delivery exists if
 * and only if its cause committed. One row per subscribed target; an event key already
 * enqueued for a target is skipped by a unique constraint, not by a check that could race.
 */
import type { Clock } from '../core/clock.ts';
import type { IdFactory } from '../core/ids.ts';
import type { TenantKind } from '../core/auth.ts';
import { eventBody } from './events.ts';
import type { NewEvent } from './events.ts';
import type { WebhookStore } from './store.ts';

/** The transaction's stores the outbox writes through (the `tx` of the cause's transaction). */
export interface OutboxTx {
  readonly webhooks: WebhookStore;
}

export interface MeterReading {
  tenantId: string;
  tenantKind: TenantKind;
  /** Cumulative usage before and after the cause, in `unit`. */
  before: number;
  after: number;
  createdAt: string;
}

/**
 * interface-spec "What the service does" 9: production tenants are metered in credits; a
 * sandbox tenant's credits are always 0, so its meter is the sealed-action count.
 */
export function meterUnit(kind: TenantKind): 'credits' | 'actions' {
  return kind === 'production' ? 'credits' : 'actions';
}

export class WebhookOutbox {
  readonly #ids: IdFactory;
  readonly #clock: Clock;
  #onEnqueued: (() => void) | undefined;

  constructor(deps: { ids: IdFactory; clock: Clock }) {
    this.#ids = deps.ids;
    this.#clock = deps.clock;
  }

  /** Called after an enqueue (the delivery worker's wake-up); runs before the commit, so it must only schedule. */
  set onEnqueued(fn: (() => void) | undefined) {
    this.#onEnqueued = fn;
  }

  /** Enqueues `e` for every subscribed target, in `tx`; returns how many deliveries were added. */
  async enqueue(e: NewEvent, tx: OutboxTx): Promise<number> {
    const targets = await tx.webhooks.subscribedTargets(e.tenantId, e.event);
    if (targets.length === 0) return 0;
    return this.#insert(e, targets, tx);
  }

  /**
   * interface-spec Events rule 1: meter.threshold fires once per configured threshold, when
   * cumulative usage first reaches it; a target without meter_thresholds gets none. A batch
   * that jumps several thresholds fires each of them once.
   */
  async meter(reading: MeterReading, tx: OutboxTx): Promise<number> {
    if (reading.after <= reading.before) return 0;
    let added = 0;
    for (const { target, threshold } of await tx.webhooks.crossedThresholds(reading.tenantId, reading.before, reading.after)) {
      added += await this.#insert(
        {
          tenantId: reading.tenantId,
          event: 'meter.threshold',
          eventKey: `meter.threshold:${threshold}`,
          fields: { threshold, meter_total: reading.after, usage_unit: meterUnit(reading.tenantKind) },
          createdAt: reading.createdAt,
        },
        [target],
        tx,
      );
    }
    return added;
  }

  async #insert(e: NewEvent, targets: readonly string[], tx: OutboxTx): Promise<number> {
    const body = eventBody(e);
    const runAt = this.#clock.now().getTime();
    let added = 0;
    for (const target of targets) {
      const id = this.#ids.next('evt');
      if (await tx.webhooks.insertDelivery({ id, tenantId: e.tenantId, target, event: e.event, eventKey: e.eventKey, body, runAt, createdAt: e.createdAt })) added++;
    }
    if (added > 0) this.#onEnqueued?.();
    return added;
  }
}
