/**
 * The seam between the sealing pipeline and the capabilities whose rows must commit with a
 * seal (metering, reviews, events, anchoring). The sealer knows only this interface; each
 * capability owns its participant and its queries, and deps.ts lists them in order.
 *
 * The hooks run inside the batch's transaction (./sealer.ts) and write through its `tx`:
 * throwing refuses this request alone and every write made for it is undone, the
 * participants' included (a refusal in `admit`, a ProblemError, comes before any write and
 * leaves the transaction as it was; any other failure rolls the batch back and seals it again
 * without that request). A
 * participant may keep what it writes for a whole batch in the batch's state (SealBatch) and
 * write it once in `flush`, after the batch's last seal: a batch sealed again starts with
 * fresh state, so nothing of a failed attempt is carried over.
 */
import type { AuthContext } from '../core/auth.ts';
import type { Store, Tx } from '../core/stores.ts';
import type { SealedRecord, SealRequest } from './sealer.ts';

/** Cumulative usage of one tenant (metering's counters). */
export interface UsageTotals {
  actionsUsed: number;
  creditsUsed: number;
}

/** What participants see of one seal, after its record row is written. */
export interface SealContext {
  readonly request: SealRequest;
  readonly record: SealedRecord;
  /** Credits charged for this seal (0 for sandbox tenants and uncounted seals). */
  readonly credits: number;
  /**
   * The tenant's cumulative usage before and after this seal, set by the metering
   * participant for the ones after it (threshold crossings compare the two).
   */
  usage?: { before: UsageTotals; after: UsageTotals };
}

/**
 * What participants keep across the seals of one batch transaction, each under its own key:
 * reads made once per batch (a tenant's usage, its webhook subscriptions) and writes made once
 * per batch (usage counters, tenant-log sizes). New for every attempt at a batch.
 */
export class SealBatch {
  readonly #state = new Map<string, unknown>();
  readonly #reads = new Map<string, unknown>();

  /** The state kept under `key`, made by `init` on first use in this batch. */
  of<T>(key: string, init: () => T): T {
    return SealBatch.#get(this.#state, key, init);
  }

  /**
   * Like `of`, for what was read from rows other seals' participants never write but a request's
   * own writes may (its onSealed): forgotten after every such request (forgetReads).
   */
  reads<T>(key: string, init: () => T): T {
    return SealBatch.#get(this.#reads, key, init);
  }

  /** A request wrote rows of its own: what `reads` kept may be stale. */
  forgetReads(): void {
    this.#reads.clear();
  }

  static #get<T>(map: Map<string, unknown>, key: string, init: () => T): T {
    let v = map.get(key) as T | undefined;
    if (v === undefined) {
      v = init();
      map.set(key, v);
    }
    return v;
  }
}

export interface SealParticipant {
  /** For logs and errors: the owning capability. */
  readonly name: string;
  /** Before anything is built or written: refuse by throwing (a ProblemError for the caller). Must not write. */
  admit?(request: SealRequest & { auth: AuthContext }, tx: Tx, batch: SealBatch): void | Promise<void>;
  /** After the record row is written, in the batch's transaction. */
  sealed?(seal: SealContext, tx: Tx, batch: SealBatch): void | Promise<void>;
  /** Once per batch, after its last seal and before its commit: the writes kept in `batch`. */
  flush?(tx: Tx, batch: SealBatch): void | Promise<void>;
  /**
   * On the request thread, once a seal made on another connection to the same file (the
   * sealing thread's, ../seal-thread/) has committed, before its answer leaves: what this
   * thread's stores remember of the rows `sealed` wrote there is refreshed.
   */
  committedElsewhere?(request: SealRequest, store: Store): Promise<void>;
}
