/**
 * OpenAPI/zod schemas of the evidence wire types (shared/types.ts), reused by every
 * capability that returns or accepts evidence: gate, records, reviews, exports.
 */
import { boundedRecord } from '../core/bounds.ts';
import { z } from '../core/router.ts';

export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'expected lowercase hex SHA-256').openapi({ example: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' });

export const Attestation = z
  .object({
    format: z.literal('svc.attestation/v2'),
    action_key: z.string(),
    tenant_id: z.string(),
    pack: z.string(),
    kind: z.enum(['gate', 'record', 'review', 'mirror', 'policy', 'epoch']),
    decision: z.string().nullable(),
    status: z.string(),
    payload_hash: Sha256Hex,
    packet_hash: Sha256Hex,
    review_route: z.string().nullable(),
    recorded_at: z.string().openapi({ description: 'Server clock, RFC 3339 UTC with milliseconds' }),
    key_id: z.string(),
    dev_key: z.boolean(),
    tenant_seq: z.number().int(),
    prev_attestation_hash: Sha256Hex.nullable(),
    manifest_digest: Sha256Hex.nullable(),
    policy_digest: Sha256Hex.nullable(),
    context: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('AttestationV2');

export const Seal = z
  .object({
    alg: z.literal('Ed25519'),
    key_id: z.string(),
    dev_key: z.boolean(),
    attestation: Attestation,
    attestation_hash: Sha256Hex,
    signature: z.string().openapi({ description: 'Ed25519 over the JCS bytes of attestation, base64url' }),
  })
  .openapi('Seal');

export const EvidencePacket = z
  .object({
    action_key: z.string(),
    href: z.string(),
    status: z.string(),
    packet_hash: Sha256Hex,
    seal: Seal,
  })
  .openapi('EvidencePacket');

// Loose where a tampered value must fail a named check rather than the request, but bounded:
// a verifier reads and may echo these, so none is larger than any value a seal can hold.
export const VerifyRequest = z
  .object({
    action_key: z.string().max(200),
    href: z.string().max(300),
    status: z.string().max(64),
    packet_hash: z.string().max(128),
    // The seal is checked field by field by shared/verify.ts, which names what is wrong; its
    // members are bounded as a whole by the strict JSON limits (core/strict-json.ts).
    seal: boundedRecord(z.string().max(64), z.unknown(), 16),
    decision: z.string().max(64).nullable(),
    payload_hash: z.string().max(128),
    review_route: z.string().max(200).nullable(),
  })
  .openapi('VerifyRequest');

export const Check = z.object({
  name: z.enum(['canonical_form', 'packet_hash', 'attestation_hash', 'signature', 'key_identity', 'key_status']),
  ok: z.boolean(),
  detail: z.string(),
});

export const VerifyResponse = z
  .object({
    verified: z.boolean(),
    key_status: z.enum(['active', 'retired', 'revoked', 'sandbox', 'unknown']),
    dev_key: z.boolean(),
    action_key: z.string(),
    checks: z.array(Check),
    failed_checks: z.array(z.string()),
  })
  .openapi('VerifyResponse');

export const SealedRecord = z
  .object({
    action_key: z.string(),
    vertical: z.string(),
    pack: z.string(),
    kind: z.string(),
    decision: z.string().nullable(),
    status: z.string(),
    review_route: z.string().nullable(),
    payload_hash: Sha256Hex,
    recorded_at: z.string(),
    tenant_seq: z.number().int(),
    credits: z.number().int(),
    evidence_packet: EvidencePacket,
    verify_request: VerifyRequest,
  })
  .catchall(z.unknown())
  .openapi('SealedRecord');
