/**
 * interface-spec Events: verify.failed, for verification authenticated with a tenant key only
 * (Authentication 5: anonymous or offline verification never triggers it). Repeats are
 * legitimate (each failed call is its own event), so each gets a fresh event key. Call it in a
 * transaction, with its `tx`: one commit for every subscribed target's delivery.
 */
import type { IdFactory } from '../core/ids.ts';
import type { OutboxTx, WebhookOutbox } from './outbox.ts';

export function enqueueVerifyFailed(
  outbox: WebhookOutbox,
  ids: IdFactory,
  tenantId: string,
  packet: { action_key: string; href: string },
  failedChecks: readonly string[],
  at: string,
  tx: OutboxTx,
): Promise<number> {
  return outbox.enqueue(
    {
      tenantId,
      event: 'verify.failed',
      eventKey: `verify.failed:${ids.ulid()}`,
      fields: { action_key: packet.action_key, href: packet.href, vertical: packet.action_key.split(':')[0] ?? '', failed_checks: [...failedChecks] },
      createdAt: at,
    },
    tx,
  );
}
