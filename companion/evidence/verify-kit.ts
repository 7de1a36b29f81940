/**
 * GET /v1/verify/kit and GET /evidence-packets/proof-kit: the published recipe an outside
 * verifier follows (DESIGN.md §3). Fields, canonicalization, hashes and checks; no key
 * material (keys are published separately at /.well-known/service-keys.json).
 */
import { ATTESTATION_FORMAT } from '../../shared/types.ts';
import { BUNDLE_FILE_NAMES, BUNDLE_FORMAT } from '../../shared/bundle.ts';
import { CHECK_ORDER } from '../../shared/verify.ts';
import { STRICT_JSON_RULES } from '../core/strict-json.ts';

const CHECKS: Record<(typeof CHECK_ORDER)[number], string> = {
  canonical_form: 'The packet fields and seal are well formed; every hashed or signed value is canonicalized with RFC 8785 (JCS).',
  packet_hash: 'SHA-256 of the JCS bytes of {action_key, decision, href, payload_hash, review_route, status} equals packet_hash and the packet_hash inside the signed attestation; the attestation repeats the same field values.',
  attestation_hash: 'SHA-256 of the JCS bytes of seal.attestation equals seal.attestation_hash.',
  signature: 'seal.signature (base64url, 64 bytes) is a valid Ed25519 (RFC 8032, pure) signature over the JCS bytes of seal.attestation under the key named by seal.key_id.',
  key_identity: 'seal.key_id equals attestation.key_id, names a key in the published key set, and is the RFC 7638 thumbprint of that key.',
  key_status: 'The key is not revoked, and dev_key agrees with the key: the sandbox key signs only dev_key:true attestations, production keys only dev_key:false.',
};

export function verifyKit(): Record<string, unknown> {
  return {
    kit_version: '1',
    attestation_format: ATTESTATION_FORMAT,
    canonicalization: 'RFC 8785 (JCS), UTF-8',
    hash: 'SHA-256, lowercase hex (64 characters)',
    signature: { alg: 'Ed25519', spec: 'RFC 8032 §5.1 (pure Ed25519)', encoding: 'base64url without padding (RFC 4648 §5)' },
    keys: {
      href: '/.well-known/service-keys.json',
      format: 'JWKS (RFC 7517) of OKP Ed25519 keys (RFC 8037) with status (active, retired, revoked, sandbox) and dev_key',
      key_id: 'RFC 7638 JWK thumbprint (SHA-256, base64url)',
      sandbox: 'Sandbox records are signed with a public, reproducible dev key (dev_key: true) and are never production evidence.',
    },
    verify_request_fields: ['action_key', 'href', 'status', 'packet_hash', 'seal', 'decision', 'payload_hash', 'review_route'],
    packet_hash_fields: ['action_key', 'decision', 'href', 'payload_hash', 'review_route', 'status'],
    payload_hash: 'SHA-256 of the JCS bytes of the request body without idempotency_key; the caller keeps the payload to re-prove it.',
    // What the service accepted is exactly what it hashed: a body breaking any of these was refused (422) before hashing.
    request_json_rules: STRICT_JSON_RULES,
    checks: CHECK_ORDER.map((name) => ({ name, rule: CHECKS[name] })),
    seal_bundle: {
      format: BUNDLE_FORMAT,
      files: BUNDLE_FILE_NAMES,
      commands: [
        'sha256sum payload.json    # equals packet_hash in attestation.json',
        'openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in attestation.json -sigfile attestation.sig',
      ],
    },
    online: { method: 'POST', path: '/v1/verify', body: 'the verify_request object returned with every record' },
  };
}
