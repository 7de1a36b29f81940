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
import { syncOf } from '../core/async-store.ts';
import type { SealBatch, SealContext, SealParticipant } from '../evidence/participants.ts';
import type { OutboxTx, WebhookOutbox } from './outbox.ts';
import type { WebhookStore } from './store.ts';

type Targets = string[] | Promise<string[]>;

/**
 * The tenant's targets subscribed to `event`, read once per batch: at hand without a promise
 * once read, and on the first read too where the store answers synchronously
 * (core/async-store.ts syncOf).
 */
function subscribed(batch: SealBatch, tx: OutboxTx, tenantId: string, event: string): Targets {
  const tenants = batch.reads('webhooks', () => new Map<string, Map<string, Targets>>());
  let events = tenants.get(tenantId);
  if (!events) tenants.set(tenantId, (events = new Map()));
  let targets = events.get(event);
  if (targets === undefined) {
    const webhooks = syncOf(tx.webhooks);
    targets = webhooks ? webhooks.subscribedTargets(tenantId, event) : tx.webhooks.subscribedTargets(tenantId, event);
    events.set(event, targets);
  }
  return targets;
}

/** `tx` whose subscriptions are the batch's reads (the outbox reads them through its tx). */
function withBatchSubscriptions(tx: OutboxTx, batch: SealBatch): OutboxTx {
  const subscribedTargets = async (tenantId: string, event: string): Promise<string[]> => subscribed(batch, tx, tenantId, event);
  return { webhooks: Object.create(tx.webhooks, { subscribedTargets: { value: subscribedTargets } }) as WebhookStore };
}

const NONE: readonly string[] = [];

export function webhookParticipant(outbox: WebhookOutbox): SealParticipant {
  /** The seal's events, for a tenant with a target subscribed to record.sealed or (with usage) meter.threshold. */
  const enqueue = async ({ request, record, usage }: SealContext, tx: OutboxTx, batch: SealBatch, meters: boolean): Promise<void> => {
    const seal = withBatchSubscriptions(tx, batch);
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
      seal,
    );
    if (usage && meters) {
      const production = request.auth.tenantKind === 'production';
      await outbox.meter(
        {
          tenantId: record.tenantId,
          tenantKind: request.auth.tenantKind,
          before: production ? usage.before.creditsUsed : usage.before.actionsUsed,
          after: production ? usage.after.creditsUsed : usage.after.actionsUsed,
          createdAt: record.recordedAt,
        },
        seal,
      );
    }
  };
  return {
    name: 'webhooks',
    // A tenant without subscribers (the common case) costs a seal two map lookups and nothing more.
    sealed(context, tx, batch) {
      const tenantId = context.record.tenantId;
      const sealed = subscribed(batch, tx, tenantId, 'record.sealed');
      const metered = context.usage ? subscribed(batch, tx, tenantId, 'meter.threshold') : NONE;
      if (sealed instanceof Promise || metered instanceof Promise) {
        return Promise.all([sealed, metered]).then(([s, m]) => (s.length > 0 || m.length > 0 ? enqueue(context, tx, batch, m.length > 0) : undefined));
      }
      if (sealed.length > 0 || metered.length > 0) return enqueue(context, tx, batch, metered.length > 0);
    },
  };
}
