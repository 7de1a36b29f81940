/**
 * GET /evidence-packets/proof-kit: everything an outside verifier needs to check seals,
 * bundles, inclusion proofs and consistency proofs with stock tools (DESIGN.md §3–§4). No
 * key material: keys are published at /.well-known/service-keys.json.
 */
import { BUNDLE_FILE_NAMES, BUNDLE_FORMAT } from '../../shared/bundle.ts';
import { EPOCH_HEADER_FORMAT } from '../../shared/epoch.ts';
import { MANIFEST_FILE, PACKAGE_FORMAT, SUMS_FILE } from './bundle-package.ts';
import { verifyKit } from './verify-kit.ts';

export function proofKit(cadenceSeconds: number): Record<string, unknown> {
  return {
    kit_version: '1',
    seals: verifyKit(),
    bundles: {
      format: BUNDLE_FORMAT,
      files: BUNDLE_FILE_NAMES,
      get: 'svc-verify bundle <action_key> --out <dir>   (or POST /evidence-packets/seal-bundle/batch with Accept: application/x-tar)',
      commands: [
        'sha256sum payload.json            # equals packet_hash inside attestation.json',
        'sha256sum attestation.json        # equals the attestation hash in verify.json',
        'openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in attestation.json -sigfile attestation.sig',
      ],
      key_pem: 'The public key of key_id as SubjectPublicKeyInfo PEM (RFC 8410): take it from /.well-known/service-keys.json; verify.json repeats it for convenience.',
      package: { format: PACKAGE_FORMAT, manifest: MANIFEST_FILE, checksums: `${SUMS_FILE} (sha256sum -c ${SUMS_FILE})` },
    },
    merkle: {
      spec: 'RFC 9162 §2.1 (identical to RFC 6962): leaf = SHA-256(0x00 ‖ data), node = SHA-256(0x01 ‖ left ‖ right), empty tree = SHA-256("")',
      inclusion: 'RFC 9162 §2.1.3.2; proofs list hashes leaf side first, lowercase hex',
      consistency: 'RFC 9162 §2.1.4.2',
    },
    tenant_log: {
      leaf_data: 'the 32 raw bytes of the record’s attestation hash (not its hex text)',
      leaf_index: 'tenant_seq',
      root: 'tenant_chain_root',
      head: 'GET /tenant/log',
      consistency: 'GET /tenant/log/consistency?from_size=<m>&to_size=<n>',
    },
    epochs: {
      cadence_seconds: cadenceSeconds,
      boundaries: 'UTC multiples of the cadence; an epoch covers period_start <= recorded_at < period_end',
      leaf: 'JCS bytes of {tenant_id, tenant_size, tenant_chain_root}, one per tenant with new leaves, sorted by tenant_id',
      canonical_root: 'RFC 9162 tree head of the epoch’s leaves',
      epoch_digest: 'SHA-256 of the JCS bytes of {epoch_seq, canonical_root, prev_epoch_digest, anchored_at, cadence_seconds}',
      header: `${EPOCH_HEADER_FORMAT}: signed like a seal, Ed25519 over its JCS bytes, key_id in /.well-known/service-keys.json`,
      epoch_log: 'RFC 9162 log whose leaf n is epoch n’s 32-byte epoch_digest; header.epoch_log is its head after the epoch',
      checkpoint:
        'C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint) of the epoch log, a signed note (https://c2sp.org/signed-note): ' +
        'origin, size, base64 root, blank line, "— <origin> base64(key hash ‖ signature)", key hash = SHA-256(origin ‖ 0x0A ‖ 0x01 ‖ public key)[0:4]',
      list: 'GET /epochs, GET /epochs/{epoch_seq}',
      consistency: 'GET /epochs/consistency?from=<seq>&to=<seq>',
    },
    inclusion_proof: {
      get: 'GET /v1/records/{action_key}/inclusion-proof (409 with estimated_next_epoch_at until the epoch closes)',
      steps: [
        'tenant_inclusion: SHA-256(0x00 ‖ attestation hash bytes) with tenant_log.proof reaches tenant_log.root at tenant_log.tree_size',
        'epoch_leaf: epoch.leaf is {tenant_id, tenant_size = tenant_log.tree_size, tenant_chain_root = tenant_log.root}',
        'epoch_inclusion: SHA-256(0x00 ‖ JCS(epoch.leaf)) with epoch.proof reaches epoch.canonical_root, which the header repeats',
        'epoch_header: epoch_digest and header_hash recompute from the header',
        'header_signature: the Ed25519 signature over JCS(header) verifies under key_id',
        'checkpoint: the signed note holds header.epoch_log and verifies under the same key',
      ],
      offline: 'svc-verify proof.json --keys service-keys.json',
    },
  };
}
