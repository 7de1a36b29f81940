/**
 * The background's half of the reviewer panel's review context: what the panel shows of a
 * paused action from its sealed record, the signed-in person's review keys, and the ciphertext
 * sealed to one of them. The background holds the person-bound credential (the device-grant
 * token or the configured key), so it makes these calls; it never sees a private key or a
 * plaintext: the popup opens the ciphertext (../review-device.ts).
 *
 * The payload_hash handed to the popup is the one the record's seal commits, taken only once
 * that seal verified against pinned keys (./evidence.ts): review context is bound to it
 * (shared/hpke.ts aad), never to a hash the companion names beside the ciphertext.
 */
import { isRecord } from '../../../shared/attestation.ts';
import type { ReviewContextCiphertext, ReviewKeyView, ReviewRecordView } from '../messages.ts';
import { CompanionError } from './companion-api.ts';
import type { CompanionApi } from './companion-api.ts';
import { verifySealed } from './evidence.ts';
import { readReasons, sealedReasons } from './gate-client.ts';
import type { KeyPins } from './key-pins.ts';
import { recordPath } from './review-client.ts';

const KEYS_PATH = '/account/me/review-keys';
const contextPath = (actionKey: string, keyId: string) => `/v1/reviews/${encodeURIComponent(actionKey)}/context?key_id=${encodeURIComponent(keyId)}`;
/** base64url without padding (RFC 4648 §5), as the companion writes keys and ciphertexts. */
const B64URL = /^[A-Za-z0-9_-]+$/;

export async function reviewRecord(deps: { api: CompanionApi; pins: KeyPins }, actionKey: string): Promise<ReviewRecordView> {
  const record = await deps.api.get(recordPath(actionKey));
  if (!isRecord(record)) throw new CompanionError('invalid-answer', `GET ${recordPath(actionKey)}: expected the sealed record`);
  const { verification, attestation } = await verifySealed(deps.pins, record.verify_request);
  // The seal must be this action's gate seal: a verified seal of another action says nothing of this one.
  const bound = verification.verified && attestation !== null && record.action_key === actionKey && attestation.action_key === actionKey && attestation.kind === 'gate';
  const reasons = bound ? sealedReasons(readReasons(record.reasons), attestation) : [];
  const review = isRecord(record.review) ? record.review : {};
  const pack = bound && typeof attestation.pack === 'string' ? attestation.pack : typeof record.pack === 'string' ? record.pack : null;
  return {
    reasons,
    verified: bound,
    payload_hash: bound && typeof attestation.payload_hash === 'string' ? attestation.payload_hash : null,
    policy_digest: bound && typeof attestation.policy_digest === 'string' ? attestation.policy_digest : null,
    paused_by: reasons[0]?.rule ?? null,
    claim_boundary: pack === null ? null : await claimBoundary(deps.api, pack),
    approved_by: (Array.isArray(review.approved_by) ? review.approved_by.filter(isRecord) : []).map(approverName),
    // The console's page of this one record (#/records/<action_key>), where it is verified in the browser.
    record_url: `${deps.api.baseUrl}/console#/records/${encodeURIComponent(actionKey)}`,
  };
}

function approverName(a: Record<string, unknown>): string {
  for (const k of ['display_name', 'principal_id', 'reviewer'] as const) if (typeof a[k] === 'string' && a[k] !== '') return a[k];
  return 'someone';
}

/** The pack's own claim boundary from the public pack list, else the list's; null when neither is there. */
async function claimBoundary(api: CompanionApi, pack: string): Promise<string | null> {
  const list = await api.getPublic('/v1/packs').catch(() => null);
  if (!isRecord(list)) return null;
  const entry = Array.isArray(list.packs) ? list.packs.filter(isRecord).find((p) => p.kind === 'gate' && p.name === pack) : undefined;
  if (entry && typeof entry.claim_boundary === 'string') return entry.claim_boundary;
  return typeof list.claim_boundary === 'string' ? list.claim_boundary : null;
}

function readKey(k: unknown): ReviewKeyView | null {
  if (!isRecord(k) || typeof k.id !== 'string' || typeof k.public_key !== 'string' || !B64URL.test(k.public_key)) return null;
  return { id: k.id, public_key: k.public_key, label: typeof k.label === 'string' ? k.label : '', status: k.status === 'active' ? 'active' : 'revoked' };
}

/** The person's review keys; null when the credential is not a person's (403 person_required): it has no devices. */
export async function listReviewKeys(api: CompanionApi): Promise<ReviewKeyView[] | null> {
  let answer: unknown;
  try {
    answer = await api.get(KEYS_PATH);
  } catch (e) {
    if (e instanceof CompanionError && e.code === 'person_required') return null;
    throw e;
  }
  if (!isRecord(answer) || !Array.isArray(answer.review_keys)) throw new CompanionError('invalid-answer', `GET ${KEYS_PATH}: expected { review_keys: [...] }`);
  return answer.review_keys.map(readKey).filter((k): k is ReviewKeyView => k !== null);
}

export async function registerReviewKey(api: CompanionApi, publicKey: string, label: string): Promise<ReviewKeyView> {
  if (typeof publicKey !== 'string' || !B64URL.test(publicKey) || publicKey.length > 64) throw new Error('reviews.registerKey: expected a base64url public key');
  const answer = await api.post(KEYS_PATH, { public_key: publicKey, label: String(label).slice(0, 64) });
  const key = isRecord(answer) ? readKey(answer.review_key) : null;
  if (key === null) throw new CompanionError('invalid-answer', `POST ${KEYS_PATH}: expected { review_key }`);
  return key;
}

/** The ciphertext for one of the person's device keys, or why there is none (interface: 404 not shared, 410 expired). */
export async function fetchReviewContext(api: CompanionApi, actionKey: string, keyId: string): Promise<ReviewContextCiphertext> {
  let answer: unknown;
  try {
    answer = await api.get(contextPath(String(actionKey), String(keyId)));
  } catch (e) {
    if (e instanceof CompanionError && e.code === 'review_context_not_shared') return { status: 'not_shared' };
    if (e instanceof CompanionError && e.code === 'review_context_expired') return { status: 'expired' };
    throw e;
  }
  if (!isRecord(answer) || typeof answer.enc !== 'string' || typeof answer.ct !== 'string' || !B64URL.test(answer.enc) || !B64URL.test(answer.ct)) {
    throw new CompanionError('invalid-answer', 'GET …/context: expected { enc, ct } in base64url');
  }
  return { status: 'sealed', action_key: String(actionKey), key_id: String(keyId), enc: answer.enc, ct: answer.ct };
}
