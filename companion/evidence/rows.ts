/**
 * The evidence table's rows as both engines read them (sealed_records; bigint columns arrive as
 * numbers on PostgreSQL too, so the columns and their types are the same), and how they map to
 * the store's records: shared by ./sqlite-store.ts and ./postgres-store.ts, so the two cannot
 * drift apart.
 */
import type { LogHead, SealedRecordRow } from './store.ts';

export interface RecordDbRow {
  tenant_id: string;
  tenant_seq: number;
  action_key: string;
  vertical: string;
  pack: string;
  kind: string;
  decision: string | null;
  status: string;
  review_route: string | null;
  payload_hash: string;
  packet_hash: string;
  attestation: string;
  attestation_hash: string;
  signature: string;
  key_id: string;
  dev_key: number;
  recorded_at: string;
  credits: number;
  details: string;
}

export const toRecord = (r: RecordDbRow): SealedRecordRow => ({
  tenantId: r.tenant_id,
  tenantSeq: r.tenant_seq,
  actionKey: r.action_key,
  vertical: r.vertical,
  pack: r.pack,
  kind: r.kind,
  decision: r.decision,
  status: r.status,
  reviewRoute: r.review_route,
  payloadHash: r.payload_hash,
  packetHash: r.packet_hash,
  attestation: r.attestation,
  attestationHash: r.attestation_hash,
  signature: r.signature,
  keyId: r.key_id,
  devKey: r.dev_key === 1,
  recordedAt: r.recorded_at,
  credits: r.credits,
  details: r.details,
});

/** The newest record of a tenant's log, as far as the next seal needs it. */
export interface HeadDbRow {
  tenant_seq: number;
  attestation_hash: string;
  recorded_at: string;
}

export const toLogHead = (r: HeadDbRow): LogHead => ({ tenantSeq: r.tenant_seq, attestationHash: r.attestation_hash, recordedAt: r.recorded_at });
