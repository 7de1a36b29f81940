/**
 * Sealing (DESIGN.md §3): Ed25519 (RFC 8032, pure) over the attestation's JCS bytes.
 * The signer is abstract so the companion can sign with a native key object and the
 * browser or tests with @noble: the evidence is the same either way.
 */
import { attestationText, packetFields } from './attestation.ts';
import { toBase64Url, utf8 } from './encoding.ts';
import { SvcError } from './errors.ts';
import { sha256Hex } from './hash.ts';
import type { AttestationV2, EvidencePacket, PacketFields, Seal, VerifyRequest } from './types.ts';

export interface SealSigner {
  keyId: string;
  devKey: boolean;
  /** Returns the 64-byte Ed25519 signature of message. */
  sign(message: Uint8Array): Uint8Array;
}

export interface SealOutput {
  seal: Seal;
  /** The signed bytes (attestation.json of a seal bundle), returned so callers hash them once. */
  attestationBytes: Uint8Array;
  /** The same bytes as text (the attestation's JCS text), so callers store and splice it without decoding. */
  attestationText: string;
}

export function sealAttestation(attestation: AttestationV2, signer: SealSigner): SealOutput {
  // A seal must name the key that made it, and a production key never signs a sandbox
  // record nor the reverse (DESIGN.md §3).
  if (attestation.key_id !== signer.keyId) {
    throw new SvcError('SEAL_MALFORMED', `attestation names key ${attestation.key_id}, signer is ${signer.keyId}`);
  }
  if (attestation.dev_key !== signer.devKey) {
    throw new SvcError('SEAL_MALFORMED', `attestation dev_key ${attestation.dev_key} does not match signer (${signer.devKey})`);
  }
  // Canonicalized once: the text is stored and spliced, its UTF-8 bytes signed and hashed.
  const text = attestationText(attestation);
  const bytes = utf8(text);
  const signature = signer.sign(bytes);
  if (signature.length !== 64) {
    throw new SvcError('SEAL_MALFORMED', `expected 64-byte Ed25519 signature, got ${signature.length}`);
  }
  return {
    seal: {
      alg: 'Ed25519',
      key_id: signer.keyId,
      dev_key: signer.devKey,
      attestation,
      attestation_hash: sha256Hex(bytes),
      signature: toBase64Url(signature),
    },
    attestationBytes: bytes,
    attestationText: text,
  };
}

export function evidencePacket(fields: PacketFields, packetHash: string, seal: Seal): EvidencePacket {
  return { action_key: fields.action_key, href: fields.href, status: fields.status, packet_hash: packetHash, seal };
}

/** The in-band body ready to POST to /v1/verify (interface-spec "Verify request"). */
export function verifyRequestFor(packet: EvidencePacket, fields: PacketFields): VerifyRequest {
  const f = packetFields(fields);
  return { ...packet, decision: f.decision, payload_hash: f.payload_hash, review_route: f.review_route };
}
