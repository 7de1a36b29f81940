/**
 * The events capability's part of every seal: the record.sealed outbox row (interface-spec
 * Events), enqueued in the seal's transaction and at most once per sealed record (rule 2).
 */
import type { IdFactory } from '../core/ids.ts';
import type { SealParticipant } from '../evidence/participants.ts';
import type { EventStore } from './store.ts';

export function eventsParticipant(events: EventStore, ids: IdFactory): SealParticipant {
  return {
    name: 'events',
    sealed({ request, record }) {
      events.insert({
        id: ids.next('evt'),
        tenantId: record.tenantId,
        type: 'record.sealed',
        dedupeKey: `record.sealed:${record.actionKey}`,
        payload: JSON.stringify({
          action_key: record.actionKey,
          decision: request.decision ?? request.status,
          attestation_root: record.attestationHash,
          stamp_id: `${record.tenantId}/${record.tenantSeq}`,
          href: record.packet.href,
        }),
        createdAt: record.recordedAt,
      });
    },
  };
}
