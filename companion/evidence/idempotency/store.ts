/**
 * Idempotent retries (interface-spec Gate request `idempotency_key`, Limits "Idempotent retry"):
 * a retry with the same key returns the original response and is metered once. The caller's
 * key is stored only as its SHA-256 (keys may carry meaning); `requestHash` tells a retry
 * from a key reused for another body. Keys live for a window (./replay.ts).
 */

export interface StoredResponse {
  requestHash: string;
  actionKey: string;
  status: number;
  /** The compact form of the original response body (./replay.ts compactResponse), as JSON text. */
  response: string;
}

/** Keys saved before `notBefore` (RFC 3339 UTC) are expired: never replayed, and purged by ./expiry.ts. */
export interface IdempotencyWindow {
  notBefore: string;
}

export interface IdempotencyStore {
  /** The response stored under the caller's key in `scope` within the window, or undefined. */
  find(tenantId: string, scope: string, key: string, window: IdempotencyWindow): Promise<StoredResponse | undefined>;
  /** Saves (or, for an expired key not purged yet, replaces) the answer. */
  save(tenantId: string, scope: string, key: string, value: StoredResponse, at: string): Promise<void>;
  /** Deletes at most `limit` expired keys, oldest first; returns how many it deleted. */
  purgeExpired(window: IdempotencyWindow, limit: number): Promise<number>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../../core/stores.ts' {
  interface Stores {
    /** Stored answers to idempotent retries. */
    readonly idempotency: IdempotencyStore;
  }
}
