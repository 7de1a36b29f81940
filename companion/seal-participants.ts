/**
 * The seal transaction's participants, in this order (evidence/participants.ts): metering
 * refuses first and records the usage totals the later participants may read. One list for
 * both places a seal runs: the request thread's sealer (deps.ts) and the sealing thread
 * (seal-thread/thread.ts).
 */
import { tenantLogParticipant } from './anchoring/tenant-log.ts';
import type { SealParticipant } from './evidence/participants.ts';
import { meteringParticipant } from './metering/participant.ts';
import { reviewsParticipant } from './reviews/participant.ts';
import { reviewContextParticipant } from './review-context/participant.ts';
import { webhookParticipant } from './webhooks/participant.ts';
import type { WebhookOutbox } from './webhooks/outbox.ts';

export function sealParticipants(parts: { outbox: WebhookOutbox; routing: SealParticipant }): SealParticipant[] {
  return [meteringParticipant(), reviewsParticipant(), reviewContextParticipant(), webhookParticipant(parts.outbox), parts.routing, tenantLogParticipant()];
}
