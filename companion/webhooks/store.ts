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

/** How many signing keys each KEK sealed; kekId null: stored in clear, awaiting its seal. */
export interface SealedKeyCount {
  kekId: string | null;
  count: number;
}

/** Which stored signing keys a reseal takes: those still clear, or every one not under the current KEK. */
export type ResealScope = 'clear' | 'not_current';

/** Where a minted signing key is sealed to (its associated data, core/secrets/envelope.ts). */
export const signingKeyBinding = (tenantId: string, id: number | string) => ({ table: 'webhook_signing_keys', column: 'key', tenantId, rowId: id });

/** A derived signing key: lowercase hex of a SHA-256 digest (Events rule 5). */
export const DERIVED_KEY = /^[0-9a-f]{64}$/;

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

  /**
   * Stores a derived key sealed under the store's current KEK (core/secrets/envelope.ts), bound
   * to its tenant and row; the clear key never reaches the database.
   */
  addSigningKey(tenantId: string, target: string, key: string, at: string): Promise<void>;
  /** Gives the current key an end date (rotation overlap). */
  retireCurrentKey(tenantId: string, target: string, retiresAt: string): Promise<void>;
  /**
   * Keys that still sign at `at`, newest first, opened. Throws SealedSecretError when one does
   * not open (sealed for another row, or under a KEK this store does not hold).
   */
  activeKeys(tenantId: string, target: string, at: string): Promise<SigningKeyRow[]>;
  /** Stored signing keys per KEK id (null: clear), for the start's check and svc-admin. */
  sealedKeyCounts(): Promise<SealedKeyCount[]>;
  /**
   * Seals the keys in `scope` under the current KEK, every tenant's, in batches; returns how
   * many it re-sealed. A key that does not open stops it with SealedSecretError.
   */
  resealSigningKeys(scope: ResealScope): Promise<number>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** The webhook delivery outbox and signing keys (webhooks capability). */
    readonly webhooks: WebhookStore;
  }
}
