/**
 * The employee's side of review context: once the gate answers needs_review, the background
 * seals the exact gate request body it submitted (and what it knows of attached files) to the
 * device key of every person who may decide the action, and posts only the ciphertexts.
 *
 * HPKE (RFC 9180) through shared/hpke.ts, one ciphertext per recipient key, each bound to the
 * action_key and payload_hash as associated data, so it opens only for that device and only as
 * the context of that sealed action. The companion answers whom to seal to and whether the
 * tenant policy wants it at all (review_context: off by default, and then nothing is posted).
 * It never receives anything it could decrypt: the private keys stay in the reviewers' browsers.
 *
 * Sharing is best effort: the action is paused either way, and a reviewer without context still
 * sees the board's "not shared". Nothing here changes what the page is told.
 */
import { isRecord } from '../../../shared/attestation.ts';
import { fromBase64Url, toBase64Url } from '../../../shared/encoding.ts';
import { encodeReviewContext, REVIEW_CONTEXT_FORMAT, sealReviewContext } from '../../../shared/hpke.ts';
import type { ContextFile } from '../../../shared/hpke.ts';
import type { FileCommitment } from '../messages.ts';
import type { CompanionApi } from './companion-api.ts';

/** The paused action as the verified gate answer names it. */
export interface PausedGate {
  action_key: string;
  payload_hash: string;
}

export type ShareOutcome =
  | { shared: number }
  | { shared: 0; skipped: 'policy-off' | 'no-recipients' | 'payload-hash-differs' | 'malformed-answer' };

interface Recipient {
  key_id: string;
  public_key: string;
}

const contextPath = (actionKey: string) => `/v1/reviews/${encodeURIComponent(actionKey)}/context`;

/**
 * The plaintext: the gate request exactly as sent, and each file's commitments with its name
 * (which the gate only ever saw as name_sha256: the reviewer's check recomputes it).
 */
export function reviewContextPlaintext(body: Record<string, unknown>, files: readonly FileCommitment[] | undefined, names?: readonly string[]): Uint8Array {
  const described: ContextFile[] | undefined = files?.map((f, i) => ({
    ...(names?.[i] !== undefined ? { name: names[i] } : {}),
    media_type: f.media_type,
    size: f.size,
    sha256: f.sha256,
    name_sha256: f.name_sha256,
  }));
  return encodeReviewContext({ format: REVIEW_CONTEXT_FORMAT, gate_request: body, ...(described ? { files: described } : {}) });
}

function readRecipients(answer: unknown): { mode: string; payloadHash: string; recipients: Recipient[] } | undefined {
  if (!isRecord(answer) || typeof answer.review_context !== 'string' || typeof answer.payload_hash !== 'string' || !Array.isArray(answer.recipients)) return undefined;
  const recipients = answer.recipients.filter(isRecord).filter((r): r is Record<string, unknown> & Recipient => typeof r.key_id === 'string' && typeof r.public_key === 'string');
  if (recipients.length !== answer.recipients.length) return undefined;
  return { mode: answer.review_context, payloadHash: answer.payload_hash, recipients };
}

/**
 * Seals `body` (the gate request as posted) to every recipient of the paused action and posts
 * the ciphertexts. Throws only what the companion client throws (CompanionError).
 */
export async function shareReviewContext(api: CompanionApi, gate: PausedGate, body: Record<string, unknown>, files?: readonly FileCommitment[], names?: readonly string[]): Promise<ShareOutcome> {
  const answer = readRecipients(await api.get(`${contextPath(gate.action_key)}-recipients`));
  if (!answer) return { shared: 0, skipped: 'malformed-answer' };
  if (answer.mode !== 'encrypted') return { shared: 0, skipped: 'policy-off' };
  // The binding must be the hash this browser verified in the sealed answer, never one the
  // companion names now: a context bound to another hash would not open for the reviewer.
  if (answer.payloadHash !== gate.payload_hash) return { shared: 0, skipped: 'payload-hash-differs' };
  if (answer.recipients.length === 0) return { shared: 0, skipped: 'no-recipients' };
  const plaintext = reviewContextPlaintext(body, files, names);
  const binding = { action_key: gate.action_key, payload_hash: gate.payload_hash };
  const ciphertexts = [];
  for (const r of answer.recipients) {
    let publicKey: Uint8Array;
    try {
      publicKey = fromBase64Url(r.public_key);
    } catch {
      continue;
    }
    const sealed = await sealReviewContext(publicKey, plaintext, binding).catch(() => undefined);
    if (sealed) ciphertexts.push({ key_id: r.key_id, enc: toBase64Url(sealed.enc), ct: toBase64Url(sealed.ct) });
  }
  if (ciphertexts.length === 0) return { shared: 0, skipped: 'no-recipients' };
  await api.post(contextPath(gate.action_key), { ciphertexts });
  return { shared: ciphertexts.length };
}

/** The employee withdrew the paused action: what was shared of it is erased now, not at the review's end. */
export async function withdrawReviewContext(api: CompanionApi, actionKey: string): Promise<void> {
  await api.delete(contextPath(actionKey));
}
