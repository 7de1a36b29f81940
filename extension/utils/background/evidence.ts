/**
 * Verifying sealed evidence in the browser with the project's shared/ code:
 * the same itemized recipe as the offline verifier, against pinned keys only.
 */
import { failedChecks, verifyEvidence } from '../../../shared/verify.ts';
import type { VerifyResult } from '../../../shared/types.ts';
import type { Verification } from '../messages.ts';
import { isRecord } from '../../../shared/attestation.ts';
import type { KeyPins } from './key-pins.ts';

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
