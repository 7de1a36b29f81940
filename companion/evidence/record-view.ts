/**
 * Rebuilds the evidence a caller sees from a stored row. The row keeps the signed
 * attestation text byte for byte, so the packet re-derived here verifies exactly like the one
 * returned when the record was sealed (also used by exports and seal bundles).
 */
import { randomUUID } from 'node:crypto';
import { evidencePacket, verifyRequestFor } from '../../shared/seal.ts';
import type { AttestationV2, EvidencePacket, PacketFields, Seal, VerifyRequest } from '../../shared/types.ts';
import { evidenceHref } from './sealer.ts';
import type { SealedRecordRow } from './store.ts';

export interface RecordView {
  fields: PacketFields;
  packet: EvidencePacket;
  verifyRequest: VerifyRequest;
  attestation: AttestationV2;
  details: Record<string, unknown>;
}

export function viewRecord(row: Omit<SealedRecordRow, 'tenantId'>): RecordView {
  const attestation = JSON.parse(row.attestation) as AttestationV2;
  const fields: PacketFields = {
    action_key: row.actionKey,
    href: evidenceHref(row.vertical, row.actionKey),
    status: row.status,
    decision: row.decision,
    payload_hash: row.payloadHash,
    review_route: row.reviewRoute,
  };
  const seal: Seal = {
    alg: 'Ed25519',
    key_id: row.keyId,
    dev_key: row.devKey,
    attestation,
    attestation_hash: row.attestationHash,
    signature: row.signature,
  };
  const packet = evidencePacket(fields, row.packetHash, seal);
  return { fields, packet, verifyRequest: verifyRequestFor(packet, fields), attestation, details: JSON.parse(row.details) };
}

/** GET /v1/records/{action_key}: the sealed record, self-contained with its seal and verify request. */
export function recordBody(row: Omit<SealedRecordRow, 'tenantId'>): Record<string, unknown> {
  const v = viewRecord(row);
  return {
    action_key: row.actionKey,
    vertical: row.vertical,
    pack: row.pack,
    kind: row.kind,
    decision: row.decision,
    status: row.status,
    review_route: row.reviewRoute,
    payload_hash: row.payloadHash,
    recorded_at: row.recordedAt,
    tenant_seq: row.tenantSeq,
    credits: row.credits,
    ...v.details,
    evidence_packet: v.packet,
    verify_request: v.verifyRequest,
  };
}

// A placeholder no stored value can contain (NUL and a per-process nonce).
const ATTESTATION_SLOT = `\u0000attestation:${randomUUID()}\u0000`;
const ATTESTATION_SLOT_JSON = JSON.stringify(ATTESTATION_SLOT);

/**
 * recordBody as JSON text for bulk readers (the records export). The stored attestation is
 * already JSON (its signed JCS text), so it is spliced in verbatim instead of being parsed and
 * serialised again for the packet and the verify request: the exported seal carries the signed
 * bytes exactly, and the export costs a fraction of the work.
 */
export function recordBodyJson(row: Omit<SealedRecordRow, 'tenantId'>): string {
  const text = JSON.stringify(recordBody({ ...row, attestation: ATTESTATION_SLOT_JSON }));
  return text.replaceAll(ATTESTATION_SLOT_JSON, () => row.attestation);
}
