/**
 * The event outbox (interface-spec Events): rows enqueued in the same transaction as what
 * caused them, drained later by the webhook worker. `dedupeKey` makes "at most once per
 * underlying event" (Events rule 2) a constraint of the store.
 */

export interface EventRow {
  id: string;
  tenantId: string;
  type: string;
  /** Unique per underlying event, or null where repeats are legitimate (verify.failed). */
  dedupeKey: string | null;
  /** JSON text, raw-safe. */
  payload: string;
  createdAt: string;
}

export interface EventStore {
  /** Inserts an event; returns false when its dedupe key was already used. */
  insert(row: EventRow): boolean;
  /** A tenant's events in id order, optionally of one type. */
  listFor(tenantId: string, type?: string): EventRow[];
}
