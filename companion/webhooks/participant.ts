/**
 * The webhook outbox's part of every seal (interface-spec Events rules 1–2): record.sealed for
 * each subscribed target, and meter.threshold for each configured threshold this seal's usage
 * crossed, both written in the seal's own transaction, so they exist exactly when the seal does.
 * Runs after the metering participant, which records the usage before and after the seal.
 *
 * A tenant's subscriptions are read once per batch (SealBatch), not once per seal: the batch's
 * transaction sees one state of the tenant's targets throughout, as a change committed just
 * after it would (a seal whose own writes may change them, its onSealed, makes the next seal
 * read them again), and a tenant without a meter.threshold subscriber is never asked which
 * thresholds a seal crossed. Kept for one batch only, nothing needs telling when targets change,
 * in this process or another one on the same database.
 */
import type { SealBatch, SealParticipant } from '../evidence/participants.ts';
import type { OutboxTx, WebhookOutbox } from './outbox.ts';
import type { WebhookStore } from './store.ts';

/** `tx` with each tenant's subscribed targets per event read once per batch. */
function withBatchSubscriptions(tx: OutboxTx, batch: SealBatch): OutboxTx & { subscribed(tenantId: string, event: string): Promise<string[]> } {
  const cached = batch.reads('webhooks', () => ({ targets: new Map<string, Promise<string[]>>() }));
  const subscribed = (tenantId: string, event: string): Promise<string[]> => {
    const key = `${tenantId}\n${event}`;
    let targets = cached.targets.get(key);
    if (!targets) {
      targets = tx.webhooks.subscribedTargets(tenantId, event);
      cached.targets.set(key, targets);
    }
    return targets;
  };
  // The outbox reads subscriptions through its tx; this one answers from the batch's reads.
  const webhooks: WebhookStore = Object.create(tx.webhooks, { subscribedTargets: { value: subscribed } }) as WebhookStore;
  return { webhooks, subscribed };
}

export function webhookParticipant(outbox: WebhookOutbox): SealParticipant {
  return {
    name: 'webhooks',
    async sealed({ request, record, usage }, seal, batch) {
      const tx = withBatchSubscriptions(seal, batch);
      await outbox.enqueue(
        {
          tenantId: record.tenantId,
          event: 'record.sealed',
          eventKey: `record.sealed:${record.actionKey}`,
          fields: {
            action_key: record.actionKey,
            decision: request.decision ?? request.status,
            attestation_root: record.attestationHash,
            stamp_id: `${record.tenantId}/${record.tenantSeq}`,
            href: record.packet.href,
          },
          createdAt: record.recordedAt,
        },
        tx,
      );
      if (usage && (await tx.subscribed(record.tenantId, 'meter.threshold')).length > 0) {
        const production = request.auth.tenantKind === 'production';
        await outbox.meter(
          {
            tenantId: record.tenantId,
            tenantKind: request.auth.tenantKind,
            before: production ? usage.before.creditsUsed : usage.before.actionsUsed,
            after: production ? usage.after.creditsUsed : usage.after.actionsUsed,
            createdAt: record.recordedAt,
          },
          tx,
        );
      }
    },
  };
}
