/**
 * interface-spec Events: verify.failed, for verification authenticated with a tenant key only
 * (Authentication 5: anonymous or offline verification never triggers it). Repeats are
 * legitimate (each failed call is its own event), so there is no dedupe key.
 */
import type { IdFactory } from '../core/ids.ts';
import type { EventStore } from './store.ts';

export function enqueueVerifyFailed(
  events: EventStore,
  ids: IdFactory,
  tenantId: string,
  packet: { action_key: string; href: string },
  failedChecks: readonly string[],
  at: string,
): void {
  events.insert({
    id: ids.next('evt'),
    tenantId,
    type: 'verify.failed',
    dedupeKey: null,
    payload: JSON.stringify({ action_key: packet.action_key, href: packet.href, vertical: packet.action_key.split(':')[0] ?? '', failed_checks: failedChecks }),
    createdAt: at,
  });
}
