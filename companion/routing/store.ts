/**
 * What the routing capability needs from storage (SQLite: ./sqlite-store.ts): the route
 * dispatch outbox (interface-spec "Route dispatch (outbox item)") and the signatures of
 * accepted callbacks. Reads take the tenant id from the credential, or for signed callbacks
 * from the path, checked against the row (interface-spec Authentication 3 and 6).
 */
import type { JobRow } from '../core/jobs/queue.ts';

export const DISPATCH_CHANNELS = ['chat', 'workflow', 'webhook'] as const;
export type DispatchChannel = (typeof DISPATCH_CHANNELS)[number];

/** Job states of the queue; "prepared" is pending with prepared_at set. */
export type DispatchJobStatus = DispatchRow['status'];

export interface DispatchRow extends JobRow<'sent'> {
  tenant_id: string;
  action_key: string;
  channel: DispatchChannel;
  target: string;
  body: string;
  prepared_at: string | null;
  created_at: string;
  resolved_at: string | null;
  /** JSON of Resolution. */
  resolution: string | null;
}

export interface NewDispatch {
  id: string;
  tenantId: string;
  actionKey: string;
  channel: DispatchChannel;
  target: string;
  body: string;
  runAt: number;
  createdAt: string;
}

/** Decision metadata of the review that resolved a dispatch; never the reason or any raw text. */
export interface Resolution {
  decision: string;
  reviewer: string;
  receipt_action_key: string;
  via: 'review_api' | 'callback';
  external_reference: Record<string, string | number> | null;
}

export interface DispatchCounts {
  pending: number;
  prepared: number;
  sent: number;
  failed: number;
  dead: number;
  resolved: number;
}

export interface TickRow {
  worker: string;
  started_at: string;
  finished_at: string;
  claimed: number;
  succeeded: number;
  retrying: number;
  dead: number;
  lease_lost: number;
}

/** Send receipts are pruned once per this many inserted (of every tenant). */
export const PRUNE_EVERY = 1000;

/** One tenant's share of a stored batch of send outcomes (route_send_receipts, migration 0020). */
export interface TenantSendReceipt {
  tenantId: string;
  worker: string;
  startedAt: string;
  finishedAt: string;
  claimed: number;
  succeeded: number;
  retrying: number;
  dead: number;
  leaseLost: number;
}

export interface DispatchQuery {
  tenantId: string;
  /** Only dead-lettered rows. */
  deadOnly?: boolean;
  limit: number;
  offset: number;
}

export interface RoutingStore {
  /** False when the action already has a dispatch. */
  insert(row: NewDispatch): Promise<boolean>;
  /**
   * An escalation step moved the action to another route: its dispatch (same dispatch_key, or
   * `row.id` when it had none) now goes there, pending again with a fresh attempt count. False
   * when a review has already resolved it.
   */
  retarget(row: NewDispatch): Promise<boolean>;
  find(tenantId: string, dispatchKey: string): Promise<DispatchRow | undefined>;
  findByAction(tenantId: string, actionKey: string): Promise<DispatchRow | undefined>;
  list(q: DispatchQuery): Promise<DispatchRow[]>;
  /** Pending, never-prepared dispatch keys of the tenant, oldest first. */
  unprepared(tenantId: string, limit: number): Promise<string[]>;
  /** Marks a pending dispatch prepared; false when it is not pending or already prepared. */
  markPrepared(tenantId: string, dispatchKey: string, at: string): Promise<boolean>;
  /** Records the deciding review; an escalation is replaced by the later decision. False when already final. */
  resolve(tenantId: string, actionKey: string, at: string, resolution: Resolution): Promise<boolean>;
  countByTarget(tenantId: string, channel: string, target: string): Promise<DispatchCounts>;
  /** The newest scheduler tick run receipts of the send queue (job_ticks), service-wide: for operators, never a tenant. */
  ticks(queue: string, limit: number): Promise<TickRow[]>;
  /** Stores each tenant's share of a batch of send outcomes, keeping about the newest `keep` per tenant. */
  recordSendReceipts(receipts: readonly TenantSendReceipt[], keep: number): Promise<void>;
  /** The newest send receipts of one tenant's dispatches, newest first. */
  tenantSendReceipts(tenantId: string, limit: number): Promise<TickRow[]>;
  /** Remembers an accepted callback signature; false when it was seen before (a replay). */
  rememberSignature(tenantId: string, signatureHash: string, at: string): Promise<boolean>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Review route dispatches and accepted callback signatures (routing capability). */
    readonly routing: RoutingStore;
  }
}
