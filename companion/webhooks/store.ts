/**
 * What the webhooks capability needs from storage (SQLite: ./sqlite-store.ts): the delivery
 * outbox, the signing keys of each target, and the subscription lookups the enqueue path runs
 * inside the seal transaction. Reads take the tenant id from the credential.
 */
import type { JobRow } from '../core/jobs/queue.ts';

export type DeliveryStatus = DeliveryRow['status'];

export interface DeliveryRow extends JobRow<'delivered'> {
  tenant_id: string;
  target: string;
  event: string;
  event_key: string;
  body: string;
  created_at: string;
}

export interface NewDelivery {
  id: string;
  tenantId: string;
  target: string;
  event: string;
  eventKey: string;
  body: string;
  runAt: number;
  createdAt: string;
}

export interface SigningKeyRow {
  key: string;
  createdAt: string;
  retiresAt: string | null;
}

export interface DeliveryQuery {
  tenantId: string;
  target: string;
  statuses?: readonly DeliveryStatus[];
  limit: number;
  offset: number;
}

export interface WebhookStore {
  /** Enabled webhook targets of the tenant subscribed to `event`. */
  subscribedTargets(tenantId: string, event: string): Promise<string[]>;
  /** Enabled targets subscribed to meter.threshold with a threshold in (before, after]. */
  crossedThresholds(tenantId: string, before: number, after: number): Promise<{ target: string; threshold: number }[]>;
  /** False when this target already has a delivery for the event key. */
  insertDelivery(row: NewDelivery): Promise<boolean>;
  listDeliveries(q: DeliveryQuery): Promise<DeliveryRow[]>;
  countByStatus(tenantId: string, target: string): Promise<Record<DeliveryStatus, number>>;
  /** Ids of non-leased deliveries created in [from, to) with one of `statuses`. */
  deliveriesInRange(tenantId: string, target: string, from: string, to: string, statuses: readonly DeliveryStatus[]): Promise<string[]>;
  findDelivery(tenantId: string, target: string, id: string): Promise<DeliveryRow | undefined>;

  addSigningKey(tenantId: string, target: string, key: string, at: string): Promise<void>;
  /** Gives the current key an end date (rotation overlap). */
  retireCurrentKey(tenantId: string, target: string, retiresAt: string): Promise<void>;
  /** Keys that still sign at `at`, newest first. */
  activeKeys(tenantId: string, target: string, at: string): Promise<SigningKeyRow[]>;
}
