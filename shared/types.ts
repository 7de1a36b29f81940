/**
 * Wire types of the evidence format (DESIGN.md §3) shared by the companion, the extension
 * and the offline verifier. Field names are the spec's; see interface-spec "Evidence packet"
 * and "Verify request".
 */

export const ATTESTATION_FORMAT = 'svc.attestation/v2';

export type SealKind = 'gate' | 'record' | 'review' | 'mirror' | 'policy' | 'epoch';

/**
 * The signed document. Its JCS bytes are what Ed25519 signs; its SHA-256 is the leaf data of
 * the tenant log (DESIGN.md §4).
 */
export interface AttestationV2 {
  format: typeof ATTESTATION_FORMAT;
  action_key: string;
  tenant_id: string;
  pack: string;
  kind: SealKind;
  /** Gate: allow | needs_review | blocked. Review: approved | rejected | escalated. Else null. */
  decision: string | null;
  /** Packet status, e.g. "sealed" for gate decisions, "recorded" for record events. */
  status: string;
  payload_hash: string;
  /** SHA-256 of the packet's JCS bytes, i.e. of payload.json in a seal bundle. */
  packet_hash: string;
  review_route: string | null;
  /** Server clock, RFC 3339 UTC with milliseconds. */
  recorded_at: string;
  key_id: string;
  dev_key: boolean;
  /** Position in the tenant's append-only log (= RFC 9162 leaf index). */
  tenant_seq: number;
  /** Attestation hash of the tenant's previous log entry; null for the first. */
  prev_attestation_hash: string | null;
  /** Digests of what shaped the decision: pack manifest, tenant policy receipt, engine rules. */
  manifest_digest: string | null;
  policy_digest: string | null;
  /** Extra committed facts by kind (e.g. reviewed action_key, mirror digest); never raw text. */
  context?: Record<string, unknown>;
}

export interface Seal {
  alg: 'Ed25519';
  key_id: string;
  dev_key: boolean;
  attestation: AttestationV2;
  /** SHA-256 hex of JCS(attestation). */
  attestation_hash: string;
  /** Ed25519 signature over JCS(attestation), base64url (RFC 4648 §5, unpadded). */
  signature: string;
}

/** The packet fields that packet_hash commits to (DESIGN.md §3): exactly what /v1/verify receives. */
export interface PacketFields {
  action_key: string;
  href: string;
  status: string;
  decision: string | null;
  payload_hash: string;
  review_route: string | null;
}

export interface EvidencePacket {
  action_key: string;
  href: string;
  status: string;
  packet_hash: string;
  seal: Seal;
}

/** Body of POST /v1/verify: the evidence packet plus decision, payload_hash and review_route. */
export interface VerifyRequest extends EvidencePacket {
  decision: string | null;
  payload_hash: string;
  review_route: string | null;
}

export type CheckName =
  | 'canonical_form'
  | 'packet_hash'
  | 'attestation_hash'
  | 'signature'
  | 'key_identity'
  | 'key_status';

export interface Check {
  name: CheckName;
  ok: boolean;
  /** What was expected and what came, for a person reading the report. */
  detail: string;
}

export type KeyStatus = 'active' | 'retired' | 'revoked' | 'sandbox';

export interface VerifyResult {
  verified: boolean;
  /** Status of the signing key in the trusted key set; "unknown" when it is not there. */
  key_status: KeyStatus | 'unknown';
  dev_key: boolean;
  checks: Check[];
}

/** RFC 8037 OKP public key as published in /.well-known/service-keys.json. */
export interface ServiceJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg?: 'EdDSA';
  use?: 'sig';
  status: KeyStatus;
  dev_key: boolean;
}

export interface ServiceJwks {
  keys: ServiceJwk[];
}
