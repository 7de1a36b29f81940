/**
 * Signatures on what the service sends and receives over HTTP:
 *
 * - event webhooks: `X-Service-Signature: t=<unix seconds>,v1=<hex>` over
 *   `timestamp.id.rawbody` (interface-spec Events rules 3–5);
 * - review dispatches and workflow callbacks: `X-Service-Signature: sha256=<hex>` over the raw
 *   body (interface-spec Events rule 8, Authentication 3);
 * - chat-platform requests: the platform's v0 scheme (DESIGN.md §5), used to verify chat
 *   callbacks.
 *
 * Browser-safe (no Buffer, no node:*). `verify*` functions return a result, `assert*` throw
 * `SvcError`; caller mistakes (no key, a non-integer timestamp to sign) throw `TypeError`.
 */
import { concatBytes, constantTimeEqual, fromHex, toBase64Url, toHex, utf8 } from './encoding.ts';
import { SvcError, isSvcError } from './errors.ts';
import type { SvcErrorCode } from './errors.ts';
import { hmacSha256, sha256Hex } from './hash.ts';

export type WebhookBody = Uint8Array | string;
export type WebhookErrorCode = Extract<SvcErrorCode, `WEBHOOK_${string}`>;
export type VerifyResult = { ok: true } | { ok: false; code: WebhookErrorCode; message: string };
/** One key, or several while a secret is rotated: any of them may match. */
export type WebhookKeys = { key: string; keys?: never } | { keys: readonly string[]; key?: never };

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const EVENT_HEADER = 'X-Service-Event';
export const ID_HEADER = 'X-Service-Id';
export const TIMESTAMP_HEADER = 'X-Service-Timestamp';
/** interface-spec Events rule 4: the reference verifier's replay window. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
/** interface-spec Events rule 5: domain-separation prefix of the whsec_ key derivation. */
export const WEBHOOK_KEY_DERIVATION_PREFIX = 'service-webhook-signing:';
export const SIGNING_SECRET_PREFIX = 'whsec_';
export const EVENT_ID_PREFIX = 'evt_';

// ---------------------------------------------------------------------------------------------
// Keys and identifiers

/**
 * interface-spec Events rule 5: key = lowercase hex SHA-256 of `service-webhook-signing:` +
 * the minted whsec_ secret. The key is that 64-character hex *string*; HMAC uses its UTF-8
 * bytes (not the 32 decoded bytes), exactly as a secret_ref-resolved key string is used, so
 * sender and receiver treat every key the same way.
 */
export function deriveWebhookKey(signingSecret: string): string {
  if (typeof signingSecret !== 'string' || !signingSecret.startsWith(SIGNING_SECRET_PREFIX)) {
    // A secret_ref value is already the key (rule 5); deriving from it would silently sign
    // with a key the receiver does not hold.
    throw new TypeError(`expected a minted ${SIGNING_SECRET_PREFIX} secret, got ${describe(signingSecret)}`);
  }
  return sha256Hex(WEBHOOK_KEY_DERIVATION_PREFIX + signingSecret);
}

/** `whsec_` + base64url of 32 random bytes (256 bits), shown to the tenant once. */
export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + toBase64Url(randomBytes(32));
}

const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase

/**
 * interface-spec Events rule 3: unique per delivery, prefix evt_. 26 base32 characters carry
 * 130 random bits; 32 divides 256, so `byte & 31` has no modulo bias.
 */
export function newEventId(): string {
  let out = EVENT_ID_PREFIX;
  for (const b of randomBytes(26)) out += ID_ALPHABET[b & 31]!;
  return out;
}

/**
 * The id sits between two dots in the signed message, so a dot inside it would let bytes move
 * between id and body under the same MAC (`evt_a.` + `.x` vs `evt_a` + `..x`). Ids are
 * therefore limited to evt_ plus URL-safe characters.
 */
const EVENT_ID_RE = /^evt_[A-Za-z0-9_-]{1,200}$/;

// ---------------------------------------------------------------------------------------------
// Event webhooks: t=<ts>,v1=<hex> (interface-spec Events rules 3–5)

export interface SignEventInput {
  key: string;
  id: string;
  /** Unix seconds. */
  timestamp: number;
  body: WebhookBody;
}

export function signEvent({ key, id, timestamp, body }: SignEventInput): { header: string; signature: string } {
  if (!EVENT_ID_RE.test(id)) throw new TypeError(`expected an event id matching ${EVENT_ID_RE}, got ${describe(id)}`);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError(`expected a timestamp in whole Unix seconds, got ${String(timestamp)}`);
  }
  const signature = toHex(hmacSha256(key, eventMessage(timestamp, id, body)));
  return { header: `t=${timestamp},v1=${signature}`, signature };
}

/** interface-spec Events rule 3: every header an event delivery carries. */
export function buildEventHeaders(input: SignEventInput & { event: string }): Record<string, string> {
  if (typeof input.event !== 'string' || input.event === '') throw new TypeError('expected an event name');
  return {
    'Content-Type': 'application/json',
    [EVENT_HEADER]: input.event,
    [ID_HEADER]: input.id,
    [TIMESTAMP_HEADER]: String(input.timestamp),
    [SIGNATURE_HEADER]: signEvent(input).header,
  };
}

export interface ParsedEventSignature {
  timestamp: number;
  /** Every v1 value, in header order (several while a secret is rotated). */
  v1: string[];
}

const TIMESTAMP_RE = /^(?:0|[1-9][0-9]{0,15})$/;
const EVENT_V1_RE = /^[0-9a-f]{64}$/; // rule 3: lowercase hex HMAC-SHA256
const OTHER_SCHEME_RE = /^v[0-9]+$/;

/**
 * Strict parse of `t=<ts>,v1=<hex>[,v1=<hex>…]`: items may be padded with spaces or tabs and
 * come in any order. Entries of other versioned schemes (`v0=…`, a future `v2=…`) are skipped,
 * never used, so a downgrade cannot be forced and a later scheme can ride alongside v1; an
 * empty item, a missing or repeated t, a non-canonical t, a v1 that is not 64 lowercase hex
 * characters, or anything else is WEBHOOK_HEADER_MALFORMED.
 */
export function parseEventSignatureHeader(header: string): ParsedEventSignature {
  if (typeof header !== 'string') throw malformed(`expected a ${SIGNATURE_HEADER} string, got ${typeof header}`);
  let timestamp: number | undefined;
  const v1: string[] = [];
  for (const raw of header.split(',')) {
    const item = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    const eq = item.indexOf('=');
    const name = eq < 0 ? '' : item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (name === 't') {
      if (timestamp !== undefined) throw malformed('expected one t= item, got several');
      timestamp = parseTimestamp(value, 't');
    } else if (name === 'v1') {
      if (!EVENT_V1_RE.test(value)) throw malformed(`expected v1= 64 lowercase hex characters, got ${describe(value)}`);
      v1.push(value);
    } else if (!OTHER_SCHEME_RE.test(name) || value === '') {
      throw malformed(`expected t=… or v1=… items, got ${describe(item)}`);
    }
  }
  if (timestamp === undefined) throw malformed('expected a t= item, got none');
  if (v1.length === 0) throw malformed('expected at least one v1= item, got none');
  return { timestamp, v1 };
}

export type VerifyEventInput = WebhookKeys & {
  id: string;
  /** X-Service-Timestamp; when given it must equal the header's t. */
  timestamp?: string;
  /** X-Service-Signature. */
  signature: string;
  body: WebhookBody;
  /** Unix seconds; defaults to the clock. */
  now?: number;
  toleranceSeconds?: number;
};

/** Verifies an event delivery as its receiver: parse → timestamps → constant-time MAC check. */
export function assertEventSignature(input: VerifyEventInput): void {
  const keys = keyList(input);
  const parsed = parseEventSignatureHeader(input.signature);
  // The t inside the signature is what is signed; a different X-Service-Timestamp beside it
  // would let a receiver check freshness on one value while the MAC covers another.
  if (input.timestamp !== undefined && parseTimestamp(input.timestamp, TIMESTAMP_HEADER) !== parsed.timestamp) {
    throw malformed(`expected ${TIMESTAMP_HEADER} to equal t=${parsed.timestamp}, got ${describe(input.timestamp)}`);
  }
  if (!EVENT_ID_RE.test(input.id)) throw malformed(`expected an ${ID_HEADER} matching ${EVENT_ID_RE}, got ${describe(input.id)}`);
  // interface-spec Events rule 4: reject stale timestamps; future ones too, so a clock skewed
  // (or a signer tricked) into the future cannot mint long-lived replayable deliveries.
  checkFreshness(parsed.timestamp, input.now, input.toleranceSeconds);
  const message = eventMessage(parsed.timestamp, input.id, input.body);
  if (!anyMacMatches(keys, message, parsed.v1.map((hex) => fromHex(hex)))) {
    throw new SvcError('WEBHOOK_SIGNATURE_MISMATCH', `no v1 signature matches any of ${keys.length} key(s)`);
  }
}

export function verifyEvent(input: VerifyEventInput): VerifyResult {
  return asResult(() => assertEventSignature(input));
}

/** interface-spec Events rule 4: `timestamp.id.` then the exact raw body bytes, never re-serialized. */
function eventMessage(timestamp: number, id: string, body: WebhookBody): Uint8Array {
  return concatBytes(utf8(`${timestamp}.${id}.`), bodyBytes(body));
}

// ---------------------------------------------------------------------------------------------
// Review dispatches and workflow callbacks: sha256=<hex> (Events rule 8, Authentication 3)

const DISPATCH_RE = /^sha256=([0-9a-fA-F]{64})$/;

/** Header value `sha256=<lowercase hex HMAC-SHA256(key, raw body)>`. */
export function signDispatch(key: string, body: WebhookBody): string {
  return `sha256=${toHex(hmacSha256(key, bodyBytes(body)))}`;
}

/**
 * Unlike rule 3 for events, the spec does not fix the hex case here, and callbacks come from
 * other platforms' HMAC steps, so either case is accepted; the MAC bytes are compared.
 */
export function assertDispatchSignature(keys: string | readonly string[], header: string, body: WebhookBody): void {
  const match = typeof header === 'string' ? DISPATCH_RE.exec(header.trim()) : null;
  if (!match) throw malformed(`expected ${SIGNATURE_HEADER} sha256=<64 hex>, got ${describe(header)}`);
  const list = keyList(typeof keys === 'string' ? { key: keys } : { keys });
  if (!anyMacMatches(list, bodyBytes(body), [fromHex(match[1]!)])) {
    throw new SvcError('WEBHOOK_SIGNATURE_MISMATCH', `sha256 signature matches none of ${list.length} key(s)`);
  }
}

export function verifyDispatch(keys: string | readonly string[], header: string, body: WebhookBody): VerifyResult {
  return asResult(() => assertDispatchSignature(keys, header, body));
}

/**
 * interface-spec Events rule 8: receivers tell a review dispatch from an event by the
 * signature prefix. Only the prefix is looked at; verification does the strict parse.
 */
export function signatureScheme(header: string): 'event' | 'dispatch' | null {
  if (typeof header !== 'string') return null;
  const h = header.trimStart();
  if (h.startsWith('sha256=')) return 'dispatch';
  if (/^(?:t|v[0-9]+)=/.test(h)) return 'event';
  return null;
}

// ---------------------------------------------------------------------------------------------
// Chat-platform signed requests (DESIGN.md §5: the platform's v0 scheme)

/** The platform's own header names (DESIGN.md §5 keeps brand names only in wire constants). */
export const CHAT_SIGNATURE_HEADER = 'X-Slack-Signature';
export const CHAT_TIMESTAMP_HEADER = 'X-Slack-Request-Timestamp';

const CHAT_SIGNATURE_RE = /^v0=([0-9a-f]{64})$/;

export interface SignChatRequestInput {
  /** Used as its UTF-8 bytes, not hex-decoded. */
  signingSecret: string;
  /** The timestamp header value (Unix seconds). */
  timestamp: string | number;
  rawBody: WebhookBody;
}

/** `v0=` + hex HMAC-SHA256(secret, `v0:<timestamp>:<raw body>`), for fixtures and tests. */
export function signChatRequest({ signingSecret, timestamp, rawBody }: SignChatRequestInput): string {
  return `v0=${toHex(hmacSha256(signingSecret, chatBasestring(String(timestamp), rawBody)))}`;
}

export interface VerifyChatRequestInput {
  signingSecret: string;
  /** The timestamp header value. */
  timestamp: string;
  /** The signature header value, `v0=<hex>`. */
  signature: string;
  rawBody: WebhookBody;
  /** Unix seconds; defaults to the clock. */
  now?: number;
  toleranceSeconds?: number;
}

export function assertChatRequest(input: VerifyChatRequestInput): void {
  const timestamp = parseTimestamp(input.timestamp, CHAT_TIMESTAMP_HEADER);
  const match = typeof input.signature === 'string' ? CHAT_SIGNATURE_RE.exec(input.signature.trim()) : null;
  if (!match) throw malformed(`expected ${CHAT_SIGNATURE_HEADER} v0=<64 lowercase hex>, got ${describe(input.signature)}`);
  // The platform's documented five-minute replay window.
  checkFreshness(timestamp, input.now, input.toleranceSeconds);
  const message = chatBasestring(input.timestamp, input.rawBody);
  if (!anyMacMatches([input.signingSecret], message, [fromHex(match[1]!)])) {
    throw new SvcError('WEBHOOK_SIGNATURE_MISMATCH', 'v0 signature does not match the signing secret');
  }
}

export function verifyChatRequest(input: VerifyChatRequestInput): VerifyResult {
  return asResult(() => assertChatRequest(input));
}

function chatBasestring(timestamp: string, rawBody: WebhookBody): Uint8Array {
  return concatBytes(utf8(`v0:${timestamp}:`), bodyBytes(rawBody));
}

// ---------------------------------------------------------------------------------------------
// Shared steps

function bodyBytes(body: WebhookBody): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return utf8(body);
  throw new TypeError(`expected the raw body as Uint8Array or string, got ${typeof body}`);
}

function keyList(source: WebhookKeys): readonly string[] {
  const keys = source.keys ?? (source.key === undefined ? [] : [source.key]);
  if (keys.length === 0 || !keys.every((k) => typeof k === 'string' && k !== '')) {
    throw new TypeError('expected at least one non-empty key string');
  }
  return keys;
}

/**
 * Constant-time per comparison, and every key × signature pair is tried without stopping
 * early, so timing does not reveal which key or which signature matched.
 */
function anyMacMatches(keys: readonly string[], message: Uint8Array, signatures: readonly Uint8Array[]): boolean {
  let ok = false;
  for (const key of keys) {
    const expected = hmacSha256(key, message);
    for (const sig of signatures) ok = constantTimeEqual(expected, sig) || ok;
  }
  return ok;
}

function checkFreshness(timestamp: number, now: number | undefined, tolerance = DEFAULT_TOLERANCE_SECONDS): void {
  const clock = now ?? Math.floor(Date.now() / 1000);
  if (!Number.isFinite(clock)) throw new TypeError(`expected now in Unix seconds, got ${String(now)}`);
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(`expected a non-negative tolerance in seconds, got ${String(tolerance)}`);
  }
  const age = clock - timestamp;
  if (age > tolerance || -age > tolerance) {
    throw new SvcError(
      'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
      `expected a timestamp within ${tolerance} s of ${clock}, got ${timestamp} (${age > 0 ? `${age} s old` : `${-age} s ahead`})`,
    );
  }
}

/** Whole Unix seconds in canonical decimal: no sign, no leading zeros, no fraction. */
function parseTimestamp(value: string, what: string): number {
  if (typeof value !== 'string' || !TIMESTAMP_RE.test(value) || !Number.isSafeInteger(Number(value))) {
    throw malformed(`expected ${what} in whole Unix seconds, got ${describe(value)}`);
  }
  return Number(value);
}

function asResult(check: () => void): VerifyResult {
  try {
    check();
    return { ok: true };
  } catch (e) {
    if (isSvcError(e) && e.code.startsWith('WEBHOOK_')) {
      return { ok: false, code: e.code as WebhookErrorCode, message: e.message };
    }
    throw e;
  }
}

function malformed(message: string): SvcError {
  return new SvcError('WEBHOOK_HEADER_MALFORMED', message);
}

function randomBytes(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

function describe(value: unknown): string {
  if (typeof value !== 'string') return typeof value;
  return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}… (${value.length} chars)` : JSON.stringify(value);
}
