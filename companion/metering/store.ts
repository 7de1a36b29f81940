/** The usage ledger's counters (interface-spec "Usage ledger"): one row per tenant. */
import type { UsageTotals } from '../evidence/participants.ts';

export interface UsageStore {
  usage(tenantId: string): Promise<UsageTotals>;
  /** Adds to the tenant's counters and returns them as they stand afterwards. */
  add(tenantId: string, actions: number, credits: number, at: string): Promise<UsageTotals>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Usage counters behind the usage ledger (metering capability). */
    readonly usage: UsageStore;
  }
}
