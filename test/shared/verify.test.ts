import { describe, expect, it } from 'vitest';
import { packetHash, payloadHash } from '../../shared/attestation.ts';
import { sealAttestation } from '../../shared/seal.ts';
import { sandboxOnlyKeySet, trustedKeySet } from '../../shared/trusted-keys.ts';
import { CHECK_ORDER, failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { isSvcError } from '../../shared/errors.ts';
import { jwksFor, makeSealedPacket, testKey } from '../helpers/seal-fixtures.ts';

const production = testKey();
const sandbox = testKey({ sandbox: true });
const keys = trustedKeySet(jwksFor([{ key: production, status: 'active' }]));

describe('verifyEvidence', () => {
  it('passes every check for an untouched production packet, reported in recipe order', async () => {
    const { request } = makeSealedPacket(production);
    const r = await verifyEvidence(request, keys);
    expect(r.checks.map((c) => c.name)).toEqual(CHECK_ORDER);
    expect(failedChecks(r)).toEqual([]);
    expect(r).toMatchObject({ verified: true, key_status: 'active', dev_key: false });
  });

  it('reports a sandbox seal as sandbox evidence, never production', async () => {
    const { request } = makeSealedPacket(sandbox);
    const r = await verifyEvidence(request, sandboxOnlyKeySet());
    expect(r).toMatchObject({ verified: true, key_status: 'sandbox', dev_key: true });
  });

  // Each field /v1/verify receives, edited, fails with the check that catches it named.
  const tampers: [string, (r: any) => void, string[]][] = [
    ['action_key', (r) => (r.action_key += 'x'), ['packet_hash']],
    ['href', (r) => (r.href = '/law/evidence-packets/other'), ['packet_hash']],
    ['status', (r) => (r.status = 'recorded'), ['packet_hash']],
    ['decision', (r) => (r.decision = 'allow'), ['packet_hash']],
    ['payload_hash', (r) => (r.payload_hash = 'c'.repeat(64)), ['packet_hash']],
    ['review_route', (r) => (r.review_route = null), ['packet_hash']],
    ['packet_hash', (r) => (r.packet_hash = 'd'.repeat(64)), ['packet_hash']],
    ['seal.attestation_hash', (r) => (r.seal.attestation_hash = 'e'.repeat(64)), ['attestation_hash']],
    ['seal.signature', (r) => (r.seal.signature = flipBase64Url(r.seal.signature)), ['signature']],
    ['seal.attestation.recorded_at', (r) => (r.seal.attestation.recorded_at = '2030-01-01T00:00:00.000Z'), ['attestation_hash', 'signature']],
    ['seal.key_id', (r) => (r.seal.key_id = sandbox.signer.keyId), ['signature', 'key_identity', 'key_status']],
    ['seal.dev_key', (r) => (r.seal.dev_key = true), ['key_identity']],
  ];
  for (const [field, edit, expected] of tampers) {
    it(`fails when ${field} is edited, naming ${expected.join(' + ')}`, async () => {
      const { request } = makeSealedPacket(production);
      const copy = structuredClone(request);
      edit(copy);
      const r = await verifyEvidence(copy, keys);
      expect(r.verified).toBe(false);
      expect(failedChecks(r)).toEqual(expected);
    });
  }

  it('fails key identity and status for a key outside the trusted set', async () => {
    const stranger = testKey();
    const { request } = makeSealedPacket(stranger);
    const r = await verifyEvidence(request, keys);
    expect(r.key_status).toBe('unknown');
    expect(failedChecks(r)).toEqual(['signature', 'key_identity', 'key_status']);
  });

  it('fails key status for a revoked key and when a production key signed a dev_key attestation', async () => {
    const revoked = trustedKeySet(jwksFor([{ key: production, status: 'revoked' }]));
    const r1 = await verifyEvidence(makeSealedPacket(production).request, revoked);
    expect(failedChecks(r1)).toEqual(['key_status']);

    // A seal whose attestation claims dev_key under a production key, signed validly.
    const liar = { ...production.signer, devKey: true };
    const { request, attestation } = makeSealedPacket(production);
    const forged = { ...attestation, dev_key: true };
    request.seal = sealAttestation(forged, liar).seal;
    const r2 = await verifyEvidence(request, keys);
    expect(failedChecks(r2)).toEqual(['key_status']);
  });

  it('fails key identity when the published kid is not the thumbprint of its key', async () => {
    const jwks = jwksFor([{ key: production, status: 'active' }]);
    const other = testKey();
    const { keys: published } = jwksFor([{ key: other, status: 'active' }], false);
    jwks.keys.push({ ...published[0]!, kid: production.signer.keyId });
    jwks.keys.splice(1, 1); // keep only the impostor under the production kid
    const r = await verifyEvidence(makeSealedPacket(production).request, trustedKeySet(jwks));
    expect(failedChecks(r)).toEqual(['signature', 'key_identity']);
  });

  it('never throws on hostile input and names every malformed field', async () => {
    const hostile: unknown[] = [null, 42, 'x', [], {}, { seal: [] }, { seal: { attestation: { format: 'v1' } } }];
    for (const input of hostile) {
      const r = await verifyEvidence(input, keys);
      expect(r.verified).toBe(false);
      expect(r.checks.map((c) => c.name)).toEqual(CHECK_ORDER);
      expect(r.checks.every((c) => !c.ok)).toBe(true);
    }
    const r = await verifyEvidence({ seal: { attestation: {} } }, keys);
    const detail = r.checks[0]!.detail;
    for (const path of ['action_key', 'packet_hash', 'seal.alg', 'seal.attestation.format', 'seal.attestation.recorded_at', 'seal.attestation.tenant_seq']) {
      expect(detail).toContain(path);
    }
  });

  it('refuses to seal with a signer that is not the key the attestation names', () => {
    const { attestation } = makeSealedPacket(production);
    try {
      sealAttestation(attestation, sandbox.signer);
      expect.unreachable();
    } catch (e) {
      expect(isSvcError(e, 'SEAL_MALFORMED')).toBe(true);
    }
  });
});

describe('packet and payload hashes', () => {
  it('packet_hash ignores members outside the six committed fields', () => {
    const { fields } = makeSealedPacket(production);
    expect(packetHash({ ...fields, extra: 1 } as typeof fields)).toBe(packetHash(fields));
  });

  it('payload_hash leaves idempotency_key out, so a retry re-proves the same payload', () => {
    const body = { pack: 'law', proposed_action: 'file the motion' };
    expect(payloadHash({ ...body, idempotency_key: 'k1' })).toBe(payloadHash(body));
    expect(payloadHash({ ...body, proposed_action: 'file the motion.' })).not.toBe(payloadHash(body));
  });
});

function flipBase64Url(s: string): string {
  const c = s[5] === 'A' ? 'B' : 'A';
  return s.slice(0, 5) + c + s.slice(6);
}
