/**
 * Benchmarks of the shared evidence core (issue: foundation): canonicalization against
 * JSON.stringify, seal sign/verify with @noble against native node:crypto (the floor), and
 * RFC 9162 tree work at 1,000,000 leaves.
 */
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, randomBytes } from 'node:crypto';
import { canonicalize } from '../shared/canonical-json.ts';
import { getPublicKey, signEd25519, verifyWithNoble, verifyWithWebCrypto } from '../shared/ed25519.ts';
import { sha256 } from '../shared/hash.ts';
import { MerkleTree, treeHead } from '../shared/merkle.ts';
import { compare, line, measure, measureAsync, section, time } from './harness.ts';

function sampleAttestation(i: number) {
  return {
    format: 'svc.attestation/v2',
    action_key: `law:proposed-action:01JBENCH${String(i).padStart(18, '0')}`,
    tenant_id: 'ten_01JBENCHTENANT000000000000',
    pack: 'law',
    kind: 'gate',
    decision: 'needs_review',
    status: 'sealed',
    payload_hash: 'a'.repeat(64),
    packet_hash: 'b'.repeat(64),
    review_route: 'browser:legal-review',
    recorded_at: '2026-11-22T01:02:03.456Z',
    key_id: 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    dev_key: false,
    tenant_seq: i,
    prev_attestation_hash: 'c'.repeat(64),
    manifest_digest: 'd'.repeat(64),
    policy_digest: null,
    context: { catalog_refs: ['law.rule.filing-review', 'law.rule.citation-check'], engine: 'law-engine/1' },
  };
}

export async function benchEvidenceCore(): Promise<void> {
  section('Canonicalization (RFC 8785) of a ~700-byte attestation');
  const doc = sampleAttestation(7);
  compare(measure('JSON.stringify (not canonical)', () => JSON.stringify(doc)), measure('canonicalize (JCS)', () => canonicalize(doc)));

  section('Ed25519 seal: @noble/ed25519 against native node:crypto (the floor)');
  const seed = new Uint8Array(randomBytes(32));
  const pk = getPublicKey(seed);
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const privateKey = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(privateKey);
  const msg = new TextEncoder().encode(canonicalize(doc));
  const sig = nodeSign(null, msg, privateKey);
  compare(
    measure('sign: node:crypto KeyObject', () => nodeSign(null, msg, privateKey)),
    measure('sign: @noble/ed25519', () => signEd25519(seed, msg)),
  );
  compare(
    measure('verify: node:crypto KeyObject', () => nodeVerify(null, msg, publicKey, sig)),
    await measureAsync('verify: WebCrypto (shared/ native path)', () => verifyWithWebCrypto(pk, msg, sig)),
    measure('verify: @noble/ed25519 (shared/ fallback)', () => verifyWithNoble(pk, msg, sig)),
  );

  section('RFC 9162 Merkle tree, 1,000,000 leaves');
  const leaves: Uint8Array[] = [];
  for (let i = 0; i < 1_000_000; i++) leaves.push(sha256(new Uint8Array([i & 255, (i >> 8) & 255, i >> 16])));
  const nodeInput = new Uint8Array(65); // 0x01 ‖ left ‖ right (RFC 9162 §2.1.1)
  const hashRate = measure('one SHA-256 of a 65-byte node input', () => sha256(nodeInput));
  const headMs = time(() => treeHead(leaves));
  line('tree head of 1e6 leaves', `${(headMs / 1000).toFixed(2)} s = ${((headMs * 1000) / 1_000_000).toFixed(2)} µs per leaf, ${(((headMs * 1000) / 1_000_000) / (1e6 / hashRate.opsPerSec)).toFixed(2)}x the time of one node hash`);
  const tree = new MerkleTree();
  for (const leaf of leaves) tree.append(leaf);
  let i = 0;
  compare(hashRate, measure('inclusion proof from stored levels (1e6 leaves)', () => tree.inclusionProof((i = (i + 7919) % 1_000_000), 1_000_000)));
}
