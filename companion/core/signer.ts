/**
 * Ed25519 signers (RFC 8032, pure Ed25519): the interface every custody implements, and the
 * two embedded ones over node:crypto KeyObjects made once at startup (parsing a PEM per
 * signature is ~15x slower, notes/performance.md).
 *
 * - Sandbox: the public, reproducible dev key of DESIGN.md §3 (seed = SHA-256 of
 *   "svc-sandbox-dev-key/v1", from shared/keys.ts). Its seals carry dev_key: true.
 * - Production, embedded default (SVC_SIGNER=file): a key created on first start at
 *   <data dir>/keys/production-ed25519.pem (PKCS#8, mode 0600) and reused after. It is never
 *   served; only its public JWK is. It is NOT the managed, non-exportable key service the spec
 *   asks production receipts to be signed with (interface-spec "What the service does" 8):
 *   signers/pkcs11.ts and signers/aws-kms.ts are, chosen in signers/select.ts.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keyId, sandboxSeed } from '../../shared/keys.ts';
import { ProblemError } from './errors.ts';

export const SIGNER_KINDS = ['file', 'pkcs11', 'aws-kms'] as const;
export type SignerKind = (typeof SIGNER_KINDS)[number];

/**
 * Where a signing key lives and who can take it away: public facts only (no PIN, no
 * credential), as /deployment/signer-plan reports them.
 */
export interface SignerCustody {
  /** `dev-seed` is the public sandbox key; the others are SVC_SIGNER's values. */
  kind: SignerKind | 'dev-seed';
  /** Held by a key service (HSM, cloud KMS) that signs for us, not by this process. */
  managed: boolean;
  /** The private key cannot be read out of its custody, not even by us. */
  nonExportable: boolean;
  /** Non-secret addresses of the key: file path, module, token and key labels, key ARN, region… */
  locators: Record<string, string>;
  /** One sentence on what this custody is, for operators. */
  description: string;
}

export interface Signer {
  /** RFC 7638 thumbprint of the public key (shared/keys.ts keyId). */
  readonly keyId: string;
  /** Raw 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** True only for the reproducible sandbox key. */
  readonly devKey: boolean;
  readonly custody: SignerCustody;
  /**
   * 64-byte Ed25519 signature over `message`. Synchronous: it runs inside the seal's
   * better-sqlite3 transaction (evidence/sealer.ts). A key service that cannot answer throws
   * SignerUnavailableError, which refuses that one seal.
   */
  sign(message: Uint8Array): Uint8Array;
  /** Releases the key service's session or thread, if any (shutdown). */
  close?(): void;
}

/**
 * The key service did not sign (timeout, refusal, lost session): the seal is refused with 503
 * and nothing is stored, as its savepoint rolls back (evidence/sealer.ts).
 */
export class SignerUnavailableError extends ProblemError {
  constructor(kind: SignerKind, reason: string) {
    super({ status: 503, code: 'signer_unavailable', detail: `the ${kind} signing key service did not sign: ${reason}; nothing was sealed, retry later` });
    this.name = 'SignerUnavailableError';
  }
}

/** A misconfigured or unsafe key custody: startup stops with this message. */
export class SignerSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignerSetupError';
  }
}

const PROBE = new TextEncoder().encode('svc signer startup probe');

/** Startup check: the key signs, and the signature verifies under the public key we publish. */
export function assertSignerUsable(signer: Signer): void {
  if (signer.publicKey.length !== 32) throw new SignerSetupError(`the ${signer.custody.kind} signer's public key is ${signer.publicKey.length} bytes, not a 32-byte Ed25519 key`);
  const signature = signer.sign(PROBE);
  if (signature.length !== 64 || !verify(null, PROBE, ed25519PublicKey(signer.publicKey), signature)) {
    throw new SignerSetupError(`the ${signer.custody.kind} signer's signature does not verify under its public key (key_id ${signer.keyId}): is the key Ed25519 and the mechanism pure EdDSA?`);
  }
}

/** RFC 8410 §4 SubjectPublicKeyInfo of a raw Ed25519 public key, as a KeyObject. */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([RFC8410_ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** The raw 32-byte key out of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4), or undefined. */
export function rawFromSpki(spki: Uint8Array): Uint8Array | undefined {
  const der = Buffer.from(spki);
  if (der.length !== 44 || !der.subarray(0, 12).equals(RFC8410_ED25519_SPKI_PREFIX)) return undefined;
  return new Uint8Array(der.subarray(12));
}

/** RFC 8410 §7 OneAsymmetricKey for Ed25519: this 16-byte DER prefix, then the 32-byte seed. */
const RFC8410_ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** RFC 8410 §4 SubjectPublicKeyInfo for Ed25519: this 12-byte prefix, then the public key. */
const RFC8410_ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export const PRODUCTION_KEY_FILE = path.join('keys', 'production-ed25519.pem');

class KeyObjectSigner implements Signer {
  readonly keyId: string;
  readonly publicKey: Uint8Array;
  readonly devKey: boolean;
  readonly custody: SignerCustody;
  readonly #privateKey: KeyObject;

  constructor(privateKey: KeyObject, devKey: boolean, custody: SignerCustody) {
    if (privateKey.asymmetricKeyType !== 'ed25519') {
      throw new Error(`expected an Ed25519 private key, got ${privateKey.asymmetricKeyType ?? privateKey.type}`);
    }
    const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
    this.publicKey = new Uint8Array(spki.subarray(RFC8410_ED25519_SPKI_PREFIX.length));
    this.keyId = keyId(this.publicKey);
    this.devKey = devKey;
    this.custody = custody;
    this.#privateKey = privateKey;
  }

  sign(message: Uint8Array): Uint8Array {
    // Algorithm null: Ed25519 hashes internally (RFC 8032 §5.1.6); no prehash.
    return new Uint8Array(sign(null, message, this.#privateKey));
  }

  /** Keep private material out of logs and accidental JSON. */
  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, devKey: this.devKey };
  }
}

const DEV_SEED_CUSTODY: SignerCustody = {
  kind: 'dev-seed',
  managed: false,
  nonExportable: false,
  locators: {},
  description: 'the public, reproducible sandbox dev key (DESIGN.md §3): anyone can sign with it, so its seals carry dev_key: true and are never production evidence',
};

export function signerFromSeed(seed: Uint8Array, devKey: boolean, custody: SignerCustody = DEV_SEED_CUSTODY): Signer {
  if (seed.length !== 32) throw new Error(`expected a 32-byte Ed25519 seed, got ${seed.length} bytes`);
  const der = Buffer.concat([RFC8410_ED25519_PKCS8_PREFIX, seed]);
  return new KeyObjectSigner(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }), devKey, custody);
}

/** The reproducible sandbox dev key (DESIGN.md §3). */
export function createSandboxSigner(): Signer {
  return signerFromSeed(sandboxSeed(), true, DEV_SEED_CUSTODY);
}

export class SigningKeyFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningKeyFileError';
  }
}

/**
 * Loads <dataDir>/keys/production-ed25519.pem, creating it on first start. Refuses a key file
 * that group or others can access: a leaked production key forges evidence.
 */
export function loadOrCreateProductionSigner(dataDir: string): Signer {
  const file = path.join(dataDir, PRODUCTION_KEY_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (!fs.existsSync(file)) createKeyFile(file);
  return new KeyObjectSigner(readKeyFile(file), false, {
    kind: 'file',
    managed: false,
    nonExportable: false,
    locators: { file },
    description: 'a PKCS#8 key file in the data directory (mode 0600), read into this process: NOT a managed key service, and anyone who can read the file can sign as this service',
  });
}

function readKeyFile(file: string): KeyObject {
  const stat = fs.statSync(file);
  if (!stat.isFile()) throw new SigningKeyFileError(`production signing key ${file} is not a regular file`);
  // POSIX permissions only; Windows has no group/other mode bits to check.
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    throw new SigningKeyFileError(
      `refusing to use production signing key ${file}: mode ${mode} lets group or others access it; run chmod 600 on it`,
    );
  }
  try {
    return createPrivateKey({ key: fs.readFileSync(file), format: 'pem' });
  } catch {
    // Never echo the file's content: it is the private key.
    throw new SigningKeyFileError(`production signing key ${file} is not a PKCS#8 PEM private key`);
  }
}

/**
 * Atomic, no-clobber creation: write a private temp file (0600 from the start, fsync), then
 * hard-link it into place, which fails if another process won the race, so two starts can
 * never end up holding different keys.
 */
function createKeyFile(file: string): void {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.fchmodSync(fd, 0o600); // exactly 0600 whatever the umask left
    fs.writeSync(fd, pem);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  fsyncDirectory(path.dirname(file));
}

function fsyncDirectory(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
