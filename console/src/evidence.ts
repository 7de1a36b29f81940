/**
 * Evidence verified in the browser with the project's shared/ code, the same recipe as the
 * offline verifier (DESIGN.md §3), so "verified" in the console never means "the server said so".
 *
 * The trust anchor is the service's JWKS (/.well-known/service-keys.json), pinned in this
 * browser on first use: each key id is remembered with its public key, and a later JWKS that
 * names a pinned key id with a different key is refused (the console then verifies nothing
 * against it and says why). Keys added later (a new production key) are pinned as they appear.
 */
import { independentEvidence, parseVerifiers } from '../../shared/independent-evidence.ts';
import type { IndependentEvidence, IndependentVerifiers } from '../../shared/independent-evidence.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';

const PINS_KEY = 'ag.console.keyPins';

export interface Verification {
  verified: boolean;
  /** The checks that failed, or why nothing could be checked. */
  failed: string[];
  keyStatus: string;
  devKey: boolean;
}

let keys: Promise<TrustedKeySet> | undefined;

async function loadPinnedKeys(): Promise<TrustedKeySet> {
  const res = await fetch('/.well-known/service-keys.json', { credentials: 'omit' });
  if (!res.ok) throw new Error(`the service's key set answered HTTP ${res.status}`);
  const jwks = (await res.json()) as { keys: { kid: string; x: string }[] };
  const pins = JSON.parse(localStorage.getItem(PINS_KEY) ?? '{}') as Record<string, string>;
  for (const k of jwks.keys) {
    const pinned = pins[k.kid];
    if (pinned !== undefined && pinned !== k.x) throw new Error(`the service now publishes a different key under the pinned key id ${k.kid}`);
    pins[k.kid] = k.x;
  }
  localStorage.setItem(PINS_KEY, JSON.stringify(pins));
  return trustedKeySet(jwks);
}

/** The pinned key set, fetched once per page load (a failed fetch is retried next time). */
export function pinnedKeys(): Promise<TrustedKeySet> {
  keys ??= loadPinnedKeys().catch((e: unknown) => {
    keys = undefined;
    throw e;
  });
  return keys;
}

export async function verifyReceipt(verifyRequest: unknown): Promise<Verification> {
  let set: TrustedKeySet;
  try {
    set = await pinnedKeys();
  } catch (e) {
    return { verified: false, failed: [e instanceof Error ? e.message : String(e)], keyStatus: 'unknown', devKey: false };
  }
  const result = await verifyEvidence(verifyRequest, set);
  return { verified: result.verified, failed: failedChecks(result), keyStatus: result.key_status, devKey: result.dev_key };
}

let verifiers: Promise<IndependentVerifiers> | undefined;

/**
 * The TSA roots and witness keys the service publishes (GET /epochs/verifiers), fetched once per
 * page load. They come from the operator, so the badges they allow say what was checked and
 * against whose keys; an auditor independent of the operator uses svc-verify with their own.
 */
function publishedVerifiers(): Promise<IndependentVerifiers> {
  verifiers ??= fetch('/epochs/verifiers', { credentials: 'omit' })
    .then(async (res) => (res.ok ? parseVerifiers(await res.json()) : { tsaRoots: [], witnessKeys: [] }))
    .catch((e: unknown) => {
      verifiers = undefined;
      throw e;
    });
  return verifiers;
}

/** The record's epoch's timestamps and cosignatures, checked here on its inclusion proof. */
export async function checkIndependent(proof: unknown, attestationHash: string | undefined): Promise<IndependentEvidence> {
  try {
    const [set, trusted] = await Promise.all([pinnedKeys(), publishedVerifiers()]);
    return await independentEvidence(proof, set, trusted, attestationHash);
  } catch (e) {
    return { proofFailed: [e instanceof Error ? e.message : String(e)], timestamp: null, witnesses: null };
  }
}
