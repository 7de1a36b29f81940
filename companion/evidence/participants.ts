/**
 * The seam between the sealing pipeline and the capabilities whose rows must commit with a
 * seal (metering, reviews, events, anchoring). The sealer knows only this interface; each
 * capability owns its participant and its queries, and deps.ts lists them in order.
 *
 * Both hooks run inside the seal's savepoint (./sealer.ts) and write through its `tx`:
 * throwing refuses this request alone and rolls back every write made for it, the
 * participants' included.
 */
import type { AuthContext } from '../core/auth.ts';
import type { Store, Tx } from '../store.ts';
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

export interface SealParticipant {
  /** For logs and errors: the owning capability. */
  readonly name: string;
  /** Before anything is built or written: refuse by throwing (a ProblemError for the caller). */
  admit?(request: SealRequest & { auth: AuthContext }, tx: Tx): void | Promise<void>;
  /** After the record row is written, in the same savepoint. */
  sealed?(seal: SealContext, tx: Tx): void | Promise<void>;
  /**
   * On the request thread, once a seal made on another connection to the same file (the
   * sealing thread's, ../seal-thread/) has committed, before its answer leaves: what this
   * thread's stores remember of the rows `sealed` wrote there is refreshed.
   */
  committedElsewhere?(request: SealRequest, store: Store): Promise<void>;
}
