/**
 * Idempotent retries (interface-spec Gate request `idempotency_key`, Limits "Idempotent retry"):
 * a retry with the same key returns the original response and is metered once. The caller's
 * key is stored only as its SHA-256 (keys may carry meaning); `requestHash` tells a retry
 * from a key reused for another body.
 */

export interface StoredResponse {
  requestHash: string;
  actionKey: string;
  status: number;
  /** The original response body, as JSON text. */
  response: string;
}

export interface IdempotencyStore {
  /** The response stored under the caller's key in `scope`, or undefined. */
  find(tenantId: string, scope: string, key: string): StoredResponse | undefined;
  save(tenantId: string, scope: string, key: string, value: StoredResponse, at: string): void;
}
