/**
 * svc-verify's witness policy (c2sp.org/tlog-cosignature): `--witness-key <vkey>` (repeatable)
 * names the witnesses the verifier trusts, `--min-cosignatures N` how many of them must have
 * cosigned the epoch's checkpoint. With either flag the check `witness_cosignatures` is added
 * to an inclusion proof's or epoch header's checks, and a proof without enough cosignatures
 * fails naming it. The cosigned checkpoint must be the very checkpoint the log signed (same
 * note text), so cosignatures over another checkpoint cannot be attached to this one.
 */
import type { AnchorResult } from '../../shared/anchor-verify.ts';
import { isRecord } from '../../shared/attestation.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import type { Check, VerifyResult } from '../../shared/types.ts';
import { readBundleProof } from './verify-timestamps.ts';
import { parseNote, parseVerifierKey } from '../../shared/note.ts';
import type { VerifierKey } from '../../shared/note.ts';
import { checkCosignatures } from '../../shared/witness.ts';
import type { WitnessPolicy } from '../../shared/witness.ts';

export const WITNESS_OPTIONS = {
  'min-cosignatures': { type: 'string' },
  'witness-key': { type: 'string', multiple: true },
} as const;

export const WITNESS_USAGE = `  --witness-key  a trusted witness's verifier key (<name>+<key id>+<base64>, type 0x04); repeatable
  --min-cosignatures  how many trusted witnesses must have cosigned the epoch's checkpoint
                 (default 1 when a --witness-key is given); fails the check witness_cosignatures`;

export class WitnessPolicyError extends Error {}

/** The policy the flags ask for, or undefined when neither is given. */
export function witnessPolicyOf(values: Record<string, unknown>): WitnessPolicy | undefined {
  const raw = values['witness-key'];
  const keysText = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  const minText = values['min-cosignatures'];
  if (keysText.length === 0 && minText === undefined) return undefined;
  const witnessKeys: VerifierKey[] = keysText.map((k, i) => {
    try {
      const key = parseVerifierKey(k);
      if (key.type !== 0x04) throw new RangeError('expected a cosignature/v1 key (type 0x04)');
      return key;
    } catch (e) {
      throw new WitnessPolicyError(`--witness-key #${i + 1}: ${(e as Error).message}`);
    }
  });
  let min = witnessKeys.length > 0 ? 1 : 0;
  if (minText !== undefined) {
    if (typeof minText !== 'string' || !/^(0|[1-9][0-9]{0,2})$/.test(minText)) throw new WitnessPolicyError('--min-cosignatures needs a whole number from 0 to 999');
    min = Number(minText);
  }
  if (min > witnessKeys.length) throw new WitnessPolicyError(`--min-cosignatures ${min} needs at least ${min} --witness-key`);
  return { minCosignatures: min, witnessKeys };
}

/** The signed epoch header inside an inclusion proof, or the document itself when it is one. */
function signedHeaderOf(value: Record<string, unknown>): Record<string, unknown> {
  return isRecord(value.epoch_header) ? value.epoch_header : value;
}

/** Adds the witness_cosignatures check to `result` (an inclusion proof's or epoch header's). */
export async function applyWitnessPolicy(value: Record<string, unknown>, result: AnchorResult, policy: WitnessPolicy): Promise<AnchorResult> {
  const signed = signedHeaderOf(value);
  const cosigned = signed.cosigned_checkpoint;
  let check: { name: string; ok: boolean; detail: string };
  try {
    if (typeof cosigned === 'string' && parseNote(cosigned).text !== parseNote(String(signed.checkpoint)).text) {
      check = { name: 'witness_cosignatures', ok: false, detail: 'cosigned_checkpoint is not the checkpoint the log signed' };
    } else {
      const c = await checkCosignatures(cosigned, policy);
      check = { name: c.name, ok: c.ok, detail: c.detail };
    }
  } catch (e) {
    check = { name: 'witness_cosignatures', ok: false, detail: `checkpoint is malformed: ${(e as Error).message}` };
  }
  const checks = [...result.checks, check] as AnchorResult['checks'];
  return { verified: checks.every((c) => c.ok), checks };
}

/**
 * A seal bundle folder meets the policy through the inclusion proof `svc-verify bundle` writes
 * beside its files (BUNDLE_PROOF_FILE): it must be this attestation's proof and verify, and its
 * epoch's checkpoint must carry the cosignatures.
 */
export async function applyBundleWitnessPolicy(dir: string, result: VerifyResult, policy: WitnessPolicy, keys: TrustedKeySet, maxBytes: number): Promise<VerifyResult> {
  const check = await bundleWitnessCheck(dir, policy, keys, maxBytes);
  return { ...result, checks: [...result.checks, check as unknown as Check], verified: result.verified && check.ok };
}

async function bundleWitnessCheck(dir: string, policy: WitnessPolicy, keys: TrustedKeySet, maxBytes: number): Promise<{ name: string; ok: boolean; detail: string }> {
  const read = await readBundleProof(dir, keys, maxBytes);
  if (!read.ok) return { name: 'witness_cosignatures', ok: false, detail: read.problem };
  const c = (await applyWitnessPolicy(read.proof, { verified: true, checks: [] }, policy)).checks[0]!;
  return { name: 'witness_cosignatures', ok: c.ok, detail: c.detail };
}
