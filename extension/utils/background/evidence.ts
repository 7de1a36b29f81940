/**
 * Verifying sealed evidence in the browser with the project's shared/ code:
 * the same itemized recipe as the offline verifier, against pinned keys only; and a record's
 * independent evidence (its epoch's timestamps and cosignatures) on its inclusion proof.
 */
import { failedChecks, verifyEvidence } from '../../../shared/verify.ts';
import type { VerifyResult } from '../../../shared/types.ts';
import type { Verification } from '../messages.ts';
import { isRecord } from '../../../shared/attestation.ts';
import type { KeyPins } from './key-pins.ts';
import { independentEvidence, parseVerifiers } from '../../../shared/independent-evidence.ts';
import type { IndependentEvidence, IndependentVerifiers } from '../../../shared/independent-evidence.ts';
import { CompanionError } from './companion-api.ts';
import type { CompanionApi } from './companion-api.ts';

export interface VerifiedEvidence {
  verification: Verification;
  result: VerifyResult;
  /** The signed attestation, once it verified (null otherwise). */
  attestation: Record<string, unknown> | null;
}

export async function verifySealed(pins: KeyPins, verifyRequest: unknown): Promise<VerifiedEvidence> {
  const seal = isRecord(verifyRequest) && isRecord(verifyRequest.seal) ? verifyRequest.seal : null;
  const kid = seal && typeof seal.key_id === 'string' ? seal.key_id : '';
  const { keys, alarm } = await pins.keysFor(kid);
  const result = await verifyEvidence(verifyRequest, keys);
  const attestation = result.verified && seal && isRecord(seal.attestation) ? seal.attestation : null;
  return {
    result,
    attestation,
    verification: {
      verified: result.verified,
      key_status: result.key_status,
      dev_key: result.dev_key,
      failed_checks: failedChecks(result),
      key_alarm: alarm,
    },
  };
}

export function unverified(reason: string): Verification {
  return { verified: false, key_status: 'unknown', dev_key: false, failed_checks: [reason], key_alarm: false };
}

/** How many records one popup asks about at once: each costs a few requests to the companion. */
export const INDEPENDENT_MAX_KEYS = 10;

/**
 * The record's epoch's RFC 3161 timestamps and witness cosignatures, checked here
 * (shared/independent-evidence.ts) on its inclusion proof, or null while its epoch is open. The
 * proof is bound to this record by the attestation hash of its sealed record, which must verify
 * under the pinned keys first: a proof of another record proves nothing about this one.
 */
export async function independentEvidenceFor(deps: { api: CompanionApi; pins: KeyPins; verifiers?: Promise<IndependentVerifiers> }, actionKey: string): Promise<IndependentEvidence | null> {
  const path = `/v1/records/${encodeURIComponent(actionKey)}`;
  const record = await deps.api.get(path);
  const sealed = await verifySealed(deps.pins, isRecord(record) ? record.verify_request : undefined);
  const seal = isRecord(record) && isRecord(record.verify_request) && isRecord(record.verify_request.seal) ? record.verify_request.seal : null;
  if (!sealed.verification.verified || typeof seal?.attestation_hash !== 'string') {
    return { proofFailed: [`the sealed record does not verify: ${sealed.verification.failed_checks.join(', ')}`], timestamp: null, witnesses: null };
  }
  let proof: unknown;
  try {
    proof = await deps.api.get(`${path}/inclusion-proof`);
  } catch (e) {
    // interface-spec Errors 409: the record's epoch has not closed yet.
    if (e instanceof CompanionError && e.status === 409) return null;
    throw e;
  }
  const header = isRecord(proof) && isRecord(proof.epoch_header) && isRecord(proof.epoch_header.header) ? proof.epoch_header.header : {};
  const { keys } = await deps.pins.keysFor(typeof header.key_id === 'string' ? header.key_id : '');
  return independentEvidence(proof, keys, await (deps.verifiers ?? publishedVerifiers(deps.api)), seal.attestation_hash);
}

/**
 * The TSA roots and witness keys the companion publishes, read once for all the records a popup
 * asks about. None published (or an old companion without the route): tokens and cosignature
 * lines are then shown unchecked.
 */
export async function publishedVerifiers(api: CompanionApi): Promise<IndependentVerifiers> {
  return parseVerifiers(await api.getPublic('/epochs/verifiers').catch(() => ({})));
}
