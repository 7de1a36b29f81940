/**
 * svc-verify's timestamp policy (RFC 3161): `--tsa-roots <pem file>` names the time-stamp
 * authorities' roots the verifier trusts, `--min-timestamps N` how many tokens that verify
 * under them the epoch must carry. With either flag the check `epoch_timestamps` is added to an
 * inclusion proof's or epoch header's checks, or to a seal bundle folder's (from the
 * inclusion-proof.json beside its 4 files, which `svc-verify bundle` writes once the record's
 * epoch has closed), and one without enough valid tokens fails naming it. Each token must be over the epoch's own checkpoint body (shared/timestamp.ts), so
 * a token over another checkpoint cannot be attached to this one.
 */
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { failedAnchorChecks, verifyInclusionProof } from '../../shared/anchor-verify.ts';
import type { AnchorResult } from '../../shared/anchor-verify.ts';
import { isRecord } from '../../shared/attestation.ts';
import { BUNDLE_PROOF_FILE } from '../../shared/bundle.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { certificatesFromPem, verifyEpochTimestamps } from '../../shared/timestamp.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import type { Check, VerifyResult } from '../../shared/types.ts';
import { ReadRefused, readCapped } from './verify-read.ts';

export const TIMESTAMP_OPTIONS = {
  'min-timestamps': { type: 'string' },
  'tsa-roots': { type: 'string' },
} as const;

export const TIMESTAMP_USAGE = `  --tsa-roots    PEM file of the RFC 3161 time-stamp authorities' root certificates to trust
  --min-timestamps  how many tokens over the epoch's checkpoint must verify under them
                 (default 1 when --tsa-roots is given); fails the check epoch_timestamps`;

export class TimestampPolicyError extends Error {}

export interface TimestampPolicy {
  minTimestamps: number;
  /** Trusted root certificates, DER. */
  roots: Uint8Array[];
  rootsFile: string | undefined;
}

/** The policy the flags ask for, or undefined when neither is given. */
export function timestampPolicyOf(values: Record<string, unknown>, maxBytes: number): TimestampPolicy | undefined {
  const file = values['tsa-roots'];
  const minText = values['min-timestamps'];
  if (file === undefined && minText === undefined) return undefined;
  let min = file === undefined ? 0 : 1;
  if (minText !== undefined) {
    if (typeof minText !== 'string' || !/^(0|[1-9][0-9]{0,2})$/.test(minText)) throw new TimestampPolicyError('--min-timestamps needs a whole number from 0 to 999');
    min = Number(minText);
  }
  if (min > 0 && (typeof file !== 'string' || file === '')) throw new TimestampPolicyError(`--min-timestamps ${min} needs --tsa-roots <pem file>`);
  let roots: Uint8Array[] = [];
  if (typeof file === 'string' && file !== '') {
    let text: string;
    try {
      text = readCapped(file, maxBytes).toString('utf8');
    } catch (e) {
      if (e instanceof ReadRefused) throw new TimestampPolicyError(`--tsa-roots: ${e.message}`);
      throw new TimestampPolicyError(`--tsa-roots: cannot read ${file}`);
    }
    try {
      roots = certificatesFromPem(text);
    } catch (e) {
      throw new TimestampPolicyError(`--tsa-roots: ${(e as Error).message}`);
    }
  }
  return { minTimestamps: min, roots, rootsFile: typeof file === 'string' ? file : undefined };
}

/** The signed epoch header inside an inclusion proof, or the document itself when it is one. */
function signedHeaderOf(value: Record<string, unknown>): Record<string, unknown> {
  return isRecord(value.epoch_header) ? value.epoch_header : value;
}

/** Adds the epoch_timestamps check to `result` (an inclusion proof's or epoch header's). */
export async function applyTimestampPolicy(value: Record<string, unknown>, result: AnchorResult, policy: TimestampPolicy): Promise<AnchorResult> {
  const signed = signedHeaderOf(value);
  const tokens = Array.isArray(signed.timestamps) ? signed.timestamps : [];
  const results = await verifyEpochTimestamps(tokens, signed.checkpoint, policy.roots);
  const valid = results.filter((r) => r.verified);
  const refused = results
    .filter((r) => !r.verified)
    .map((r) => `${r.tsa}: ${r.checks.filter((c) => !c.ok).map((c) => `${c.name} (${c.detail})`).join(', ')}`);
  const ok = valid.length >= policy.minTimestamps;
  const summary = `${valid.length} of ${tokens.length} RFC 3161 token${tokens.length === 1 ? '' : 's'} verify over the checkpoint (at least ${policy.minTimestamps} required)`;
  const times = valid.map((r) => `${r.tsa} at ${r.genTime}`).join('; ');
  const detail = [summary, times && `timestamped by ${times}`, refused.length > 0 && `refused: ${refused.join('; ')}`].filter(Boolean).join('; ');
  const check = { name: 'epoch_timestamps', ok, detail } as unknown as AnchorResult['checks'][number];
  const checks = [...result.checks, check];
  return { verified: checks.every((c) => c.ok), checks };
}

/** The record's inclusion proof beside a seal bundle's 4 files (it carries the epoch's tokens). */
export { BUNDLE_PROOF_FILE };

/**
 * Adds epoch_timestamps to a seal bundle folder's result: its inclusion-proof.json must be for
 * this very attestation, verify under the trusted keys, and carry enough valid tokens.
 */
export async function applyBundleTimestampPolicy(dir: string, result: VerifyResult, policy: TimestampPolicy, keys: TrustedKeySet, maxBytes: number): Promise<VerifyResult> {
  const check = await bundleTimestampCheck(dir, policy, keys, maxBytes);
  const checks = [...result.checks, check as unknown as Check];
  return { ...result, checks, verified: result.verified && check.ok };
}

async function bundleTimestampCheck(dir: string, policy: TimestampPolicy, keys: TrustedKeySet, maxBytes: number): Promise<{ name: string; ok: boolean; detail: string }> {
  const read = await readBundleProof(dir, keys, maxBytes);
  if (!read.ok) return { name: 'epoch_timestamps', ok: false, detail: read.problem };
  const c = (await applyTimestampPolicy(read.proof, { verified: true, checks: [] }, policy)).checks[0]!;
  return { name: 'epoch_timestamps', ok: c.ok, detail: c.detail };
}

/**
 * The inclusion proof beside a seal bundle folder, once it is shown to be this attestation's and
 * to verify under the trusted keys: what a bundle's timestamps and cosignatures are checked on.
 */
export async function readBundleProof(
  dir: string,
  keys: TrustedKeySet,
  maxBytes: number,
): Promise<{ ok: true; proof: Record<string, unknown> } | { ok: false; problem: string }> {
  const fail = (problem: string) => ({ ok: false as const, problem });
  const file = path.join(dir, BUNDLE_PROOF_FILE);
  if (!lstatSync(file, { throwIfNoEntry: false })) return fail(`no ${BUNDLE_PROOF_FILE} beside the bundle (svc-verify bundle and the service's seal-bundle packages carry it once the record's epoch has closed)`);
  let proof: unknown;
  let attestationHash: string;
  try {
    proof = JSON.parse(readCapped(file, maxBytes).toString('utf8'));
    attestationHash = sha256Hex(new Uint8Array(readCapped(path.join(dir, 'attestation.json'), maxBytes)));
  } catch (e) {
    return fail(`${BUNDLE_PROOF_FILE}: ${e instanceof ReadRefused ? e.message : 'not JSON'}`);
  }
  if (!isRecord(proof)) return fail(`${BUNDLE_PROOF_FILE} is not an inclusion proof`);
  const anchored = await verifyInclusionProof(proof, keys, attestationHash);
  if (!anchored.verified) return fail(`${BUNDLE_PROOF_FILE} does not verify for this attestation: ${failedAnchorChecks(anchored).join(', ')}`);
  return { ok: true, proof };
}

