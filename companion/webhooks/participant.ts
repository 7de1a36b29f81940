/**
 * The webhook outbox's part of every seal (interface-spec Events rules 1–2): record.sealed for
 * each subscribed target, and meter.threshold for each configured threshold this seal's usage
 * crossed, both written in the seal's own savepoint, so they exist exactly when the seal does.
 * Runs after the metering participant, which records the usage before and after the seal.
 */
import type { SealParticipant } from '../evidence/participants.ts';
import type { WebhookOutbox } from './outbox.ts';

export function webhookParticipant(outbox: WebhookOutbox): SealParticipant {
  return {
    name: 'webhooks',
    async sealed({ request, record, usage }, tx) {
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
      if (usage) {
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
