/**
 * The replay decision for a request carrying an idempotency key: the stored answer when the
 * body is the same, 422 when the key was used for a different body, nothing for a new key.
 */
import { ProblemError } from '../core/errors.ts';
import type { IdempotencyStore } from './store.ts';

export interface IdempotencyClaim {
  /** The endpoint family the key is unique within, e.g. "POST /v1/gate". */
  scope: string;
  key: string;
  requestHash: string;
}

export interface Replay {
  status: number;
  body: unknown;
}

export function findReplay(store: IdempotencyStore, tenantId: string, claim: IdempotencyClaim): Replay | undefined {
  const earlier = store.find(tenantId, claim.scope, claim.key);
  if (!earlier) return undefined;
  if (earlier.requestHash !== claim.requestHash) {
    throw new ProblemError({
      status: 422,
      code: 'idempotency_key_reused',
      title: 'Idempotency key reused',
      detail: 'This idempotency_key was already used for a different request body; use a new key for a new request.',
      errors: [{ in: 'body', path: '/idempotency_key', message: 'already used for a different request body' }],
    });
  }
  return { status: earlier.status, body: JSON.parse(earlier.response) };
}
