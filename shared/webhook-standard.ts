/**
 * Standard Webhooks signatures (standardwebhooks.com, spec/standard-webhooks.md "Signature
 * scheme"), an opt-in per endpoint beside the service's own scheme:
 *
 *   webhook-id: <id>   webhook-timestamp: <unix seconds>
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, id.timestamp.rawbody)> [space v1,<…>]…
 *
 * The Standard's key is the base64 body of a `whsec_` secret. The service keeps only the
 * derived key of Events rule 5 (a 64-character hex string, used as its UTF-8 bytes), so for
 * this mode it publishes `whsec_` + base64(UTF-8 of that key): stock Standard Webhooks
 * libraries then verify with exactly the bytes the service signs with, and the service still
 * never stores the minted secret. Browser-safe.
 */
import { concatBytes, constantTimeEqual, fromBase64Url, toBase64, utf8 } from './encoding.ts';
import { SvcError } from './errors.ts';
import { hmacSha256 } from './hash.ts';
import { DEFAULT_TOLERANCE_SECONDS, SIGNING_SECRET_PREFIX } from './webhook-signature.ts';

export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';

/** The Standard's secret for an HMAC key string: whsec_ + base64 of its UTF-8 bytes. */
export function standardSecretForKey(key: string): string {
  if (typeof key !== 'string' || key === '') throw new TypeError('expected a non-empty key string');
  return SIGNING_SECRET_PREFIX + toBase64(utf8(key));
}

/** The HMAC key bytes of a Standard secret (`whsec_<base64>`; the prefix is optional, as in the reference libraries). */
export function standardKeyFromSecret(secret: string): Uint8Array {
  const body = secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) {
    throw new SvcError('WEBHOOK_HEADER_MALFORMED', 'expected a whsec_ secret with a padded base64 body');
  }
  return fromBase64Url(body.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
}

export interface StandardSignInput {
  /** HMAC keys, newest first; one v1 entry each. Strings are used as their UTF-8 bytes. */
  keys: readonly (string | Uint8Array)[];
  id: string;
  /** Unix seconds. */
  timestamp: number;
  body: Uint8Array | string;
}

function content(id: string, timestamp: number | string, body: Uint8Array | string): Uint8Array {
  return concatBytes(utf8(`${id}.${timestamp}.`), typeof body === 'string' ? utf8(body) : body);
}

/** The three Standard headers; several keys give several space-separated v1 entries. */
export function buildStandardHeaders(input: StandardSignInput): Record<string, string> {
  if (input.keys.length === 0) throw new TypeError('expected at least one key');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(input.id)) throw new TypeError(`expected a URL-safe message id, got ${JSON.stringify(input.id)}`);
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) throw new TypeError(`expected whole Unix seconds, got ${input.timestamp}`);
  const message = content(input.id, input.timestamp, input.body);
  return {
    'Content-Type': 'application/json',
    [STANDARD_ID_HEADER]: input.id,
    [STANDARD_TIMESTAMP_HEADER]: String(input.timestamp),
    [STANDARD_SIGNATURE_HEADER]: input.keys.map((k) => `v1,${toBase64(hmacSha256(k, message))}`).join(' '),
  };
}

export interface StandardVerifyInput {
  /** Key bytes (standardKeyFromSecret) or key strings; any may match (rotation). */
  keys: readonly (string | Uint8Array)[];
  id: string;
  timestamp: string;
  signature: string;
  body: Uint8Array | string;
  now?: number;
  toleranceSeconds?: number;
}

/** Receiver side: timestamp window, then a constant-time match of any v1 entry with any key. */
export function assertStandardWebhook(input: StandardVerifyInput): void {
  if (input.keys.length === 0) throw new TypeError('expected at least one key');
  if (!/^(?:0|[1-9][0-9]{0,15})$/.test(input.timestamp)) throw new SvcError('WEBHOOK_HEADER_MALFORMED', `expected ${STANDARD_TIMESTAMP_HEADER} in Unix seconds`);
  const ts = Number(input.timestamp);
  const now = input.now ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - ts) > tolerance) {
    throw new SvcError('WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE', `expected a timestamp within ${tolerance} s of ${now}, got ${ts}`);
  }
  // Entries of other versions (v1a = Ed25519) are skipped, never used.
  const sigs = input.signature
    .split(' ')
    .filter((e) => e.startsWith('v1,'))
    .map((e) => e.slice(3));
  if (sigs.length === 0) throw new SvcError('WEBHOOK_HEADER_MALFORMED', `expected at least one v1,<base64> entry in ${STANDARD_SIGNATURE_HEADER}`);
  const message = content(input.id, input.timestamp, input.body);
  let ok = false;
  for (const key of input.keys) {
    const expected = hmacSha256(key, message);
    for (const s of sigs) {
      let given: Uint8Array;
      try {
        given = fromBase64Url(s.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
      } catch {
        continue;
      }
      ok = constantTimeEqual(expected, given) || ok;
    }
  }
  if (!ok) throw new SvcError('WEBHOOK_SIGNATURE_MISMATCH', `no v1 entry matches any of ${input.keys.length} key(s)`);
}
