/**
 * Signature checks of route callbacks (interface-spec Authentication 3; DESIGN.md §5), each
 * over the exact raw body bytes and compared in constant time:
 *
 *   chat      Slack's v0 signed request ("Verifying requests from Slack"): X-Slack-Signature
 *             = "v0=" + hex HMAC-SHA256(signing secret, "v0:" + X-Slack-Request-Timestamp +
 *             ":" + raw body); a timestamp more than five minutes from the server clock is
 *             refused as stale (a replay).
 *   workflow  X-Service-Signature = "sha256=" + hex HMAC-SHA256(callback secret, raw body)
 *   webhook   the same, keyed by the target's signing key
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CHAT_REPLAY_WINDOW_SECONDS, SHA256_PREFIX } from '../config.ts';

export type SignatureVerdict = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'mismatch' | 'stale' };

const HEX64 = /^[0-9a-f]{64}$/;

function equalHex(expected: Buffer, hex: string): boolean {
  return HEX64.test(hex) && timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

export interface ChatSignedRequest {
  signingSecret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Uint8Array;
  /** Server clock, Unix seconds. */
  now: number;
}

export function verifyChatSignature(r: ChatSignedRequest): SignatureVerdict {
  if (r.timestamp === undefined || r.signature === undefined) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(r.timestamp) || !r.signature.startsWith('v0=')) return { ok: false, reason: 'malformed' };
  // Checked first: an old request is refused whatever its signature (Slack: "five minutes").
  if (Math.abs(r.now - Number(r.timestamp)) > CHAT_REPLAY_WINDOW_SECONDS) return { ok: false, reason: 'stale' };
  const mac = createHmac('sha256', r.signingSecret).update(`v0:${r.timestamp}:`, 'utf8').update(r.body).digest();
  return equalHex(mac, r.signature.slice(3)) ? { ok: true } : { ok: false, reason: 'mismatch' };
}

/** sha256=<hex> against any of `keys` (a webhook target signs with two keys during a rotation). */
export function verifySha256Signature(keys: readonly string[], signature: string | undefined, body: Uint8Array): SignatureVerdict {
  if (signature === undefined) return { ok: false, reason: 'missing' };
  if (!signature.startsWith(SHA256_PREFIX)) return { ok: false, reason: 'malformed' };
  const hex = signature.slice(SHA256_PREFIX.length);
  // Every key is tried, so the time taken does not say which one matched.
  let ok = false;
  for (const key of keys) ok = equalHex(createHmac('sha256', key).update(body).digest(), hex) || ok;
  return ok ? { ok: true } : { ok: false, reason: 'mismatch' };
}
