/**
 * Builds real seals for tests of the verification side: real Ed25519 signatures from the
 * sandbox dev key or a fresh production-like key, never fixed expected values.
 */
import { randomBytes } from 'node:crypto';
import { packetHash } from '../../shared/attestation.ts';
import { getPublicKey, signEd25519 } from '../../shared/ed25519.ts';
import { keyId, publicKeyToJwk, sandboxJwk, sandboxSeed } from '../../shared/keys.ts';
import { evidencePacket, sealAttestation, verifyRequestFor } from '../../shared/seal.ts';
import type { SealSigner } from '../../shared/seal.ts';
import { ATTESTATION_FORMAT } from '../../shared/types.ts';
import type { AttestationV2, KeyStatus, PacketFields, ServiceJwks, VerifyRequest } from '../../shared/types.ts';

export interface TestKey {
  seed: Uint8Array;
  publicKey: Uint8Array;
  signer: SealSigner;
}

export function testKey(opts: { sandbox?: boolean } = {}): TestKey {
  const seed = opts.sandbox ? sandboxSeed() : new Uint8Array(randomBytes(32));
  const publicKey = getPublicKey(seed);
  return {
    seed,
    publicKey,
    signer: { keyId: keyId(publicKey), devKey: !!opts.sandbox, sign: (m) => signEd25519(seed, m) },
  };
}

export function jwksFor(keys: { key: TestKey; status: KeyStatus }[], withSandbox = true): ServiceJwks {
  return {
    keys: [
      ...(withSandbox ? [sandboxJwk()] : []),
      ...keys.map(({ key, status }) => publicKeyToJwk(key.publicKey, { status, dev_key: key.signer.devKey })),
    ],
  };
}

export function makeSealedPacket(key: TestKey, overrides: Partial<PacketFields> = {}): { request: VerifyRequest; fields: PacketFields; attestation: AttestationV2 } {
  const fields: PacketFields = {
    action_key: 'law:proposed-action:01JTESTACTION0000000000000',
    href: '/law/evidence-packets/law:proposed-action:01JTESTACTION0000000000000',
    status: 'sealed',
    decision: 'needs_review',
    payload_hash: 'a'.repeat(64),
    review_route: 'browser:legal-review',
    ...overrides,
  };
  const attestation: AttestationV2 = {
    format: ATTESTATION_FORMAT,
    action_key: fields.action_key,
    tenant_id: 'ten_test',
    pack: 'law',
    kind: 'gate',
    decision: fields.decision,
    status: fields.status,
    payload_hash: fields.payload_hash,
    packet_hash: packetHash(fields),
    review_route: fields.review_route,
    recorded_at: '2026-11-22T01:02:03.456Z',
    key_id: key.signer.keyId,
    dev_key: key.signer.devKey,
    tenant_seq: 0,
    prev_attestation_hash: null,
    manifest_digest: 'b'.repeat(64),
    policy_digest: null,
  };
  const { seal } = sealAttestation(attestation, key.signer);
  const packet = evidencePacket(fields, attestation.packet_hash, seal);
  return { request: verifyRequestFor(packet, fields), fields, attestation };
}
