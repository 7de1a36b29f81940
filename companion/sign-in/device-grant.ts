/**
 * The OAuth 2.0 device authorization grant (RFC 8628) for the browser extension: the codes, the
 * scope (capability names), and the key the device receives once a person approved it.
 *
 * The access token is an ordinary person-bound API key (core/auth.ts), narrowed to the granted
 * capabilities and expiring: it is stored only as its SHA-256, resolves to the person through
 * the one key path, can do at most what the person can (the subset is intersected with the
 * person's capabilities on every request), is listed and revoked like any key, and stops at once
 * when the person is deactivated.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { CAPABILITIES, isCapability } from '../core/auth.ts';
import type { Capability } from '../core/auth.ts';

/** The public clients that may start the grant, by client_id (RFC 6749 §2.2), with the name people see. */
export const DEVICE_CLIENTS: Readonly<Record<string, string>> = {
  'action-gate-extension': 'Action Gate browser extension',
};

/** What the extension's reviewer mode asks for when it names no scope (RFC 6749 §3.3 default). */
export const DEFAULT_DEVICE_SCOPE: readonly Capability[] = ['reviews:decide', 'records:read'];

/** RFC 8628 §3.2 expires_in: long enough to switch to the console and sign in. */
export const DEVICE_CODE_TTL_SECONDS = 600;
/** RFC 8628 §3.2 interval: the default is 5 seconds. */
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5 slow_down: "the interval MUST be increased by 5 seconds for this and all subsequent requests". */
export const SLOW_DOWN_STEP_SECONDS = 5;
/** How long the issued key lives; the person signs the extension in again after it. */
export const DEVICE_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * RFC 8628 §6.1: base-20 consonants without vowels (no words spelled by accident) and without
 * look-alikes; 8 characters give 20^8 ≈ 2^34.6 codes, which §5.1 pairs with short expiry.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** As people read and type it: XXXX-XXXX (RFC 8628 §6.1 suggests a separator). */
export function displayUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * RFC 8628 §6.1: what a person typed, case-insensitive and without dashes or spaces; undefined
 * when it cannot be a user code.
 */
export function normaliseUserCode(typed: string): string | undefined {
  if (typed.length > 32) return undefined;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  return code.length === USER_CODE_LENGTH && [...code].every((ch) => USER_CODE_ALPHABET.includes(ch)) ? code : undefined;
}

/** The device code: 256 random bits, kept by the service only as a digest. */
export function newDeviceCode(): { code: string; hash: Uint8Array } {
  const code = randomBytes(32).toString('base64url');
  return { code, hash: hashDeviceCode(code) };
}

export function hashDeviceCode(code: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`svc-device-code/v1\n${code}`, 'utf8').digest());
}

/** RFC 6749 §3.3: space-delimited capability names; undefined when one is not a capability. */
export function parseScope(scope: string | undefined): Capability[] | undefined {
  if (scope === undefined || scope.trim() === '') return [...DEFAULT_DEVICE_SCOPE];
  const names = scope.trim().split(/ +/);
  if (names.length > CAPABILITIES.length * 2 || !names.every(isCapability)) return undefined;
  return CAPABILITIES.filter((c) => names.includes(c));
}

/** What an approval grants: the requested capabilities the approving person holds. */
export function grantable(requested: readonly string[], held: readonly Capability[]): Capability[] {
  return held.filter((c) => requested.includes(c));
}
