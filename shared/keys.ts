/**
 * Ed25519 key material in the forms outside verifiers use: the reproducible sandbox key
 * (DESIGN.md §3), JWK (RFC 8037 §2) and JWKS, RFC 7638 key ids, and SubjectPublicKeyInfo PEM
 * (RFC 8410 §4) for `openssl pkeyutl -verify`.
 */
import { assertEd25519PublicKey, getPublicKey, isEd25519PublicKey } from './ed25519.ts';
import { fromBase64Url, toBase64, toBase64Url, utf8 } from './encoding.ts';
import { SvcError } from './errors.ts';
import { sha256 } from './hash.ts';
import type { KeyStatus, ServiceJwk, ServiceJwks } from './types.ts';

// ---- sandbox dev key (DESIGN.md §3) -----------------------------------------------------

/** The sandbox key's seed is SHA-256 of this ASCII string, so anyone can re-derive the key. */
export const SANDBOX_KEY_SEED_LABEL = 'svc-sandbox-dev-key/v1';

export function sandboxSeed(): Uint8Array {
  return sha256(utf8(SANDBOX_KEY_SEED_LABEL));
}

let sandboxPublicKeyMemo: Uint8Array | undefined;

export function sandboxPublicKey(): Uint8Array {
  sandboxPublicKeyMemo ??= getPublicKey(sandboxSeed());
  return sandboxPublicKeyMemo.slice();
}

export function sandboxJwk(): ServiceJwk {
  return publicKeyToJwk(sandboxPublicKey(), { status: 'sandbox', dev_key: true });
}

// ---- key id (RFC 7638 thumbprint) -------------------------------------------------------

/**
 * RFC 7638 §3 thumbprint: base64url(SHA-256(UTF-8 of the required members in lexicographic
 * order, no whitespace)). For an OKP key the required members are crv, kty, x (RFC 8037 §2,
 * example in §A.3). They are fixed and x is base64url, so the JSON needs no escaping.
 */
export function keyId(publicKey: Uint8Array): string {
  assertEd25519PublicKey(publicKey);
  const x = toBase64Url(publicKey);
  return toBase64Url(sha256(utf8(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`)));
}

// ---- JWK (RFC 8037 §2) ------------------------------------------------------------------

const KEY_STATUSES: readonly KeyStatus[] = ['active', 'retired', 'revoked', 'sandbox'];

export interface JwkMetadata {
  status: KeyStatus;
  dev_key: boolean;
}

export function publicKeyToJwk(publicKey: Uint8Array, meta: JwkMetadata): ServiceJwk {
  assertEd25519PublicKey(publicKey);
  const issues: Issue[] = [];
  checkMetadata(meta, '', issues);
  throwIfAny(issues, 'invalid key metadata');
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: toBase64Url(publicKey),
    kid: keyId(publicKey),
    alg: 'EdDSA',
    use: 'sig',
    status: meta.status,
    dev_key: meta.dev_key,
  };
}

/**
 * The public key of an Ed25519 OKP JWK. Strict on the members RFC 8037 defines; other members
 * are ignored as RFC 7517 §4 requires. A JWK holding `d` (the private key) is refused outright:
 * private key material has no business in a key set or a verification recipe.
 */
export function jwkToPublicKey(jwk: unknown): Uint8Array {
  const issues: Issue[] = [];
  const publicKey = checkOkpJwk(jwk, '', issues);
  throwIfAny(issues, 'invalid Ed25519 JWK');
  return publicKey!;
}

/**
 * A service key set (/.well-known/service-keys.json). Every key is checked and every failing
 * field collected (details.issues: [{path, message}]) before a single KEY_INVALID is thrown.
 * Returns fresh objects holding only the members ServiceJwk defines.
 *
 * Whether each kid is its key's thumbprint is deliberately not checked here: that is the
 * verifier's key-identity check, which must be reported, not thrown.
 */
export function parseJwks(value: unknown): ServiceJwks {
  const issues: Issue[] = [];
  const keys: ServiceJwk[] = [];
  if (!isPlainObject(value)) {
    issues.push({ path: '', message: `expected a JWKS object, got ${describe(value)}` });
  } else if (!Array.isArray(value.keys)) {
    issues.push({ path: 'keys', message: `expected an array, got ${describe(value.keys)}` });
  } else {
    const seen = new Set<string>();
    value.keys.forEach((jwk: unknown, i: number) => {
      const path = `keys[${i}]`;
      const before = issues.length;
      const publicKey = checkOkpJwk(jwk, path, issues);
      if (!isPlainObject(jwk)) return;
      if (typeof jwk.kid !== 'string' || jwk.kid === '') {
        issues.push({ path: `${path}.kid`, message: `expected a non-empty string, got ${describe(jwk.kid)}` });
      } else if (seen.has(jwk.kid)) {
        issues.push({ path: `${path}.kid`, message: `duplicate kid ${JSON.stringify(jwk.kid)}` });
      } else {
        seen.add(jwk.kid);
      }
      checkMetadata(jwk, `${path}.`, issues);
      if (issues.length === before && publicKey !== undefined) {
        keys.push({
          kty: 'OKP',
          crv: 'Ed25519',
          x: jwk.x as string,
          kid: jwk.kid as string,
          ...(jwk.alg !== undefined ? { alg: 'EdDSA' as const } : {}),
          ...(jwk.use !== undefined ? { use: 'sig' as const } : {}),
          status: jwk.status as KeyStatus,
          dev_key: jwk.dev_key as boolean,
        });
      }
    });
  }
  throwIfAny(issues, 'invalid JWKS');
  return { keys };
}

export function findKey(jwks: ServiceJwks, kid: string): ServiceJwk | undefined {
  return jwks.keys.find((k) => k.kid === kid);
}

// ---- SubjectPublicKeyInfo PEM (RFC 8410 §4, RFC 7468 §13) -------------------------------

/**
 * DER of SubjectPublicKeyInfo { AlgorithmIdentifier { id-Ed25519 (1.3.101.112) }, BIT STRING
 * (33 bytes: 0 unused bits, then the key) }: always these 12 bytes then the 32-byte key
 * (RFC 8410 §4; the example in §10.1).
 */
export const RFC8410_ED25519_SPKI_PREFIX = Uint8Array.of(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00);

const PEM_BEGIN = '-----BEGIN PUBLIC KEY-----';
const PEM_END = '-----END PUBLIC KEY-----';

/** PEM as OpenSSL writes it: 64-character base64 lines, LF line ends, trailing newline. */
export function publicKeyToSpkiPem(publicKey: Uint8Array): string {
  assertEd25519PublicKey(publicKey);
  const der = new Uint8Array(RFC8410_ED25519_SPKI_PREFIX.length + publicKey.length);
  der.set(RFC8410_ED25519_SPKI_PREFIX);
  der.set(publicKey, RFC8410_ED25519_SPKI_PREFIX.length);
  const body = toBase64(der).match(/.{1,64}/g)!;
  return [PEM_BEGIN, ...body, PEM_END, ''].join('\n');
}

/**
 * Strict reading (RFC 7468 §3 `stricttextualmsg`): one PUBLIC KEY block, full 64-character
 * lines but the last, LF or CRLF line ends, nothing before or after; the DER must be exactly
 * the Ed25519 SubjectPublicKeyInfo.
 */
export function spkiPemToPublicKey(pem: string): Uint8Array {
  if (typeof pem !== 'string') throw new SvcError('KEY_INVALID', `expected a PEM string, got ${describe(pem)}`);
  const lines = pem.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  const body = lines.slice(1, -1);
  const wellFormed =
    lines[0] === PEM_BEGIN &&
    lines[lines.length - 1] === PEM_END &&
    body.length > 0 &&
    body.every((line, i) => /^[A-Za-z0-9+/=]+$/.test(line) && (i === body.length - 1 ? line.length <= 64 : line.length === 64));
  if (!wellFormed) {
    throw new SvcError('KEY_INVALID', `expected a strict "${PEM_BEGIN}" block with 64-character base64 lines`);
  }
  const der = fromBase64Strict(body.join(''));
  const prefixOk = RFC8410_ED25519_SPKI_PREFIX.every((b, i) => der[i] === b);
  if (der.length !== RFC8410_ED25519_SPKI_PREFIX.length + 32 || !prefixOk) {
    throw new SvcError('KEY_INVALID', `expected a 44-byte Ed25519 SubjectPublicKeyInfo (RFC 8410 §4), got ${der.length} bytes`);
  }
  const publicKey = der.slice(RFC8410_ED25519_SPKI_PREFIX.length);
  assertEd25519PublicKey(publicKey);
  return publicKey;
}

/** RFC 4648 §4 base64 with mandatory padding; one accepted encoding per byte string. */
function fromBase64Strict(text: string): Uint8Array {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    throw new SvcError('KEY_INVALID', 'expected padded base64 in the PEM body');
  }
  try {
    return fromBase64Url(text.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
  } catch {
    throw new SvcError('KEY_INVALID', 'expected canonical base64 in the PEM body');
  }
}

// ---- validation helpers -----------------------------------------------------------------

interface Issue {
  path: string;
  message: string;
}

function throwIfAny(issues: Issue[], what: string): void {
  if (issues.length === 0) return;
  const list = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  throw new SvcError('KEY_INVALID', `${what}: ${list}`, { issues });
}

/** RFC 8037 §2 members of an Ed25519 public JWK; returns the key when x is usable. */
function checkOkpJwk(jwk: unknown, path: string, issues: Issue[]): Uint8Array | undefined {
  const at = (member: string) => (path ? `${path}.${member}` : member);
  if (!isPlainObject(jwk)) {
    issues.push({ path, message: `expected a JWK object, got ${describe(jwk)}` });
    return undefined;
  }
  // Report presence only: the value is a private key and must never reach an error message.
  if ('d' in jwk) issues.push({ path: at('d'), message: 'private key member d must not be present' });
  if (jwk.kty !== 'OKP') issues.push({ path: at('kty'), message: `expected "OKP", got ${describe(jwk.kty)}` });
  if (jwk.crv !== 'Ed25519') issues.push({ path: at('crv'), message: `expected "Ed25519", got ${describe(jwk.crv)}` });
  // RFC 8037 §3.1: the JWS algorithm for Ed25519 is "EdDSA".
  if (jwk.alg !== undefined && jwk.alg !== 'EdDSA') issues.push({ path: at('alg'), message: `expected "EdDSA", got ${describe(jwk.alg)}` });
  if (jwk.use !== undefined && jwk.use !== 'sig') issues.push({ path: at('use'), message: `expected "sig", got ${describe(jwk.use)}` });
  if (jwk.kid !== undefined && typeof jwk.kid !== 'string') issues.push({ path: at('kid'), message: `expected a string, got ${describe(jwk.kid)}` });
  return checkX(jwk.x, at('x'), issues);
}

function checkX(x: unknown, path: string, issues: Issue[]): Uint8Array | undefined {
  if (typeof x !== 'string') {
    issues.push({ path, message: `expected base64url string, got ${describe(x)}` });
    return undefined;
  }
  let bytes: Uint8Array;
  try {
    bytes = fromBase64Url(x);
  } catch {
    issues.push({ path, message: `expected unpadded base64url (RFC 4648 §5), got ${describe(x)}` });
    return undefined;
  }
  if (bytes.length !== 32) {
    issues.push({ path, message: `expected 32 bytes, got ${bytes.length}` });
    return undefined;
  }
  if (!isEd25519PublicKey(bytes)) {
    issues.push({ path, message: 'expected a canonical, non-small-order Ed25519 point' });
    return undefined;
  }
  return bytes;
}

/**
 * status and dev_key, and their agreement: DESIGN.md §3 keeps the sandbox key (dev_key true)
 * and production keys (dev_key false) apart, so a key with status sandbox is exactly a dev key.
 */
function checkMetadata(meta: unknown, prefix: string, issues: Issue[]): void {
  if (!isPlainObject(meta)) {
    issues.push({ path: prefix.replace(/\.$/, ''), message: `expected an object with status and dev_key, got ${describe(meta)}` });
    return;
  }
  const statusOk = typeof meta.status === 'string' && (KEY_STATUSES as readonly string[]).includes(meta.status);
  if (!statusOk) {
    issues.push({ path: `${prefix}status`, message: `expected one of ${KEY_STATUSES.join(', ')}, got ${describe(meta.status)}` });
  }
  if (typeof meta.dev_key !== 'boolean') {
    issues.push({ path: `${prefix}dev_key`, message: `expected a boolean, got ${describe(meta.dev_key)}` });
  } else if (statusOk && meta.dev_key !== (meta.status === 'sandbox')) {
    issues.push({
      path: `${prefix}dev_key`,
      message: `expected ${meta.status === 'sandbox'} for status ${JSON.stringify(meta.status)}, got ${meta.dev_key}`,
    });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return value.length > 60 ? `${JSON.stringify(value.slice(0, 60))}…` : JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : String(value);
}
