/**
 * Offline verification of anchoring evidence (DESIGN.md §4), as named steps like
 * ./verify.ts: an inclusion proof (record → tenant root → canonical root → signed epoch
 * header → checkpoint), a signed epoch header alone, and a consistency proof. Every check is
 * always reported; hostile input never throws. Browser-safe.
 */
import { canonicalBytes } from './canonical-json.ts';
import { verifyEd25519 } from './ed25519.ts';
import { constantTimeEqual, fromBase64Url, fromHex, isSha256Hex, toHex, utf8 } from './encoding.ts';
import { EPOCH_HEADER_FORMAT, epochDigest, epochLeafBytes, noteKeyHash, parseCheckpoint } from './epoch.ts';
import type { EpochHeader, EpochLeaf } from './epoch.ts';
import { sha256Hex } from './hash.ts';
import { assertConsistency, assertInclusion, leafHash, proofFromHex } from './merkle.ts';
import type { TrustedKeySet } from './trusted-keys.ts';

export type AnchorCheckName =
  | 'tenant_inclusion'
  | 'epoch_leaf'
  | 'epoch_inclusion'
  | 'epoch_header'
  | 'header_signature'
  | 'checkpoint'
  | 'consistency';

export interface AnchorCheck {
  name: AnchorCheckName;
  ok: boolean;
  detail: string;
}

export interface AnchorResult {
  verified: boolean;
  checks: AnchorCheck[];
}

const pass = (name: AnchorCheckName, detail: string): AnchorCheck => ({ name, ok: true, detail });
const fail = (name: AnchorCheckName, detail: string): AnchorCheck => ({ name, ok: false, detail });
const done = (checks: AnchorCheck[]): AnchorResult => ({ verified: checks.every((c) => c.ok), checks });

export function failedAnchorChecks(r: AnchorResult): AnchorCheckName[] {
  return r.checks.filter((c) => !c.ok).map((c) => c.name);
}

/** Runs `step`; any exception (malformed input) becomes a failed check naming it. */
function guarded(name: AnchorCheckName, step: () => AnchorCheck): AnchorCheck {
  try {
    return step();
  } catch (e) {
    return fail(name, e instanceof Error ? e.message : String(e));
  }
}

async function guardedAsync(name: AnchorCheckName, step: () => Promise<AnchorCheck>): Promise<AnchorCheck> {
  try {
    return await step();
  } catch (e) {
    return fail(name, e instanceof Error ? e.message : String(e));
  }
}

const obj = (v: unknown): Record<string, any> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {});

/** The signed epoch header as served by GET /epochs/{seq} and inside an inclusion proof. */
export async function verifyEpochHeader(signed: unknown, keys: TrustedKeySet): Promise<AnchorResult> {
  return done(await headerChecks(obj(signed), keys));
}

async function headerChecks(s: Record<string, any>, keys: TrustedKeySet): Promise<AnchorCheck[]> {
  const header = obj(s.header) as EpochHeader;
  return [
    guarded('epoch_header', () => {
      if (header.format !== EPOCH_HEADER_FORMAT) return fail('epoch_header', `expected format ${EPOCH_HEADER_FORMAT}, got ${String(header.format)}`);
      const digest = epochDigest(header);
      if (digest !== header.epoch_digest) return fail('epoch_header', `recomputed epoch_digest ${digest}, header says ${String(header.epoch_digest)}`);
      const hash = sha256Hex(canonicalBytes(header));
      if (hash !== s.header_hash) return fail('epoch_header', `SHA-256 of the JCS header is ${hash}, header_hash says ${String(s.header_hash)}`);
      return pass('epoch_header', `epoch ${header.epoch_seq}: epoch_digest and header_hash recompute`);
    }),
    await guardedAsync('header_signature', async () => {
      const key = keys.get(String(header.key_id));
      if (!key) return fail('header_signature', `key ${String(header.key_id)} is not in the trusted key set`);
      if (s.key_id !== header.key_id) return fail('header_signature', `signature names key ${String(s.key_id)}, header names ${header.key_id}`);
      if (!key.kidMatchesKey) return fail('header_signature', `trusted key ${key.kid} is not the RFC 7638 thumbprint of its public key`);
      if (key.status === 'revoked' || key.devKey) return fail('header_signature', `key ${key.kid} is ${key.devKey ? 'the sandbox dev key' : 'revoked'}`);
      const ok = await verifyEd25519(key.publicKey, canonicalBytes(header), fromBase64Url(String(s.signature)));
      return ok ? pass('header_signature', `Ed25519 signature verifies under key ${key.kid}`) : fail('header_signature', `Ed25519 signature does not verify under key ${key.kid}`);
    }),
    await guardedAsync('checkpoint', async () => {
      const note = parseCheckpoint(String(s.checkpoint));
      const log = obj(header.epoch_log);
      if (note.size !== log.size || toHex(note.root) !== log.root) {
        return fail('checkpoint', `checkpoint holds size ${note.size} root ${toHex(note.root)}, header's epoch_log is size ${String(log.size)} root ${String(log.root)}`);
      }
      const key = keys.get(String(header.key_id));
      if (!key) return fail('checkpoint', `key ${String(header.key_id)} is not in the trusted key set`);
      for (const sig of note.signatures) {
        if (sig.name !== note.origin || !constantTimeEqual(sig.keyHash, noteKeyHash(sig.name, key.publicKey))) continue;
        if (await verifyEd25519(key.publicKey, utf8(note.body), sig.signature)) return pass('checkpoint', `tlog-checkpoint ${note.origin} signed by ${key.kid}`);
      }
      return fail('checkpoint', `no signature on the checkpoint verifies under key ${key.kid}`);
    }),
  ];
}

/** An inclusion proof as served by GET /v1/records/{action_key}/inclusion-proof. */
export async function verifyInclusionProof(input: unknown, keys: TrustedKeySet, expectedAttestationHash?: string): Promise<AnchorResult> {
  const p = obj(input);
  const tenant = obj(p.tenant_log);
  const epoch = obj(p.epoch);
  const leaf = obj(epoch.leaf) as EpochLeaf;
  const signed = obj(p.epoch_header);
  const header = obj(signed.header);
  const checks: AnchorCheck[] = [
    guarded('tenant_inclusion', () => {
      const attestationHash = String(p.attestation_hash);
      if (!isSha256Hex(attestationHash)) return fail('tenant_inclusion', 'attestation_hash is not 64 lowercase hex characters');
      if (expectedAttestationHash !== undefined && attestationHash !== expectedAttestationHash) {
        return fail('tenant_inclusion', `proof is for attestation ${attestationHash}, the record's is ${expectedAttestationHash}`);
      }
      // DESIGN.md §4: the leaf data is the attestation hash bytes.
      assertInclusion(leafHash(fromHex(attestationHash)), tenant.leaf_index, tenant.tree_size, proofFromHex(tenant.proof), fromHex(String(tenant.root)));
      return pass('tenant_inclusion', `leaf ${tenant.leaf_index} of ${tenant.tree_size} reaches tenant root ${tenant.root}`);
    }),
    guarded('epoch_leaf', () => {
      if (leaf.tenant_id !== p.tenant_id || leaf.tenant_size !== tenant.tree_size || leaf.tenant_chain_root !== tenant.root) {
        return fail('epoch_leaf', `epoch leaf ${JSON.stringify(leaf)} does not name tenant ${String(p.tenant_id)} at size ${String(tenant.tree_size)} with root ${String(tenant.root)}`);
      }
      return pass('epoch_leaf', 'the epoch leaf names this tenant log head');
    }),
    guarded('epoch_inclusion', () => {
      assertInclusion(leafHash(epochLeafBytes(leaf)), epoch.leaf_index, epoch.tree_size, proofFromHex(epoch.proof), fromHex(String(epoch.canonical_root)));
      if (header.canonical_root !== epoch.canonical_root || header.epoch_seq !== epoch.epoch_seq || header.tenant_count !== epoch.tree_size) {
        return fail('epoch_inclusion', `proof reaches canonical root ${String(epoch.canonical_root)} of epoch ${String(epoch.epoch_seq)}, the signed header says ${String(header.canonical_root)} of epoch ${String(header.epoch_seq)}`);
      }
      return pass('epoch_inclusion', `tenant leaf ${epoch.leaf_index} of ${epoch.tree_size} reaches the canonical root of epoch ${epoch.epoch_seq}`);
    }),
    ...(await headerChecks(signed, keys)),
  ];
  return done(checks);
}

/** An RFC 9162 consistency proof between two heads ({from: {size, root}, to: {size, root}, proof}). */
export function verifyConsistencyProof(input: unknown): AnchorResult {
  const p = obj(input);
  const from = obj(p.from);
  const to = obj(p.to);
  return done([
    guarded('consistency', () => {
      assertConsistency(from.size, to.size, fromHex(String(from.root)), fromHex(String(to.root)), proofFromHex(p.proof));
      return pass('consistency', `the tree of ${to.size} leaves extends the tree of ${from.size} (RFC 9162 §2.1.4.2)`);
    }),
  ]);
}
