/**
 * Ed25519 signers (RFC 8032, pure Ed25519) over node:crypto KeyObjects made once at startup:
 * parsing a PEM per signature is ~15x slower (notes/performance.md).
 *
 * - Sandbox: the public, reproducible dev key of DESIGN.md §3 (seed = SHA-256 of
 *   "svc-sandbox-dev-key/v1", from shared/keys.ts). Its seals carry dev_key: true.
 * - Production: a key created on first start at <data dir>/keys/production-ed25519.pem
 *   (PKCS#8, mode 0600) and reused after. It is never served; only its public JWK is.
 *   (The spec's managed, non-exportable key service is a later Signer implementation.)
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keyId, sandboxSeed } from '../../shared/keys.ts';

export interface Signer {
  /** RFC 7638 thumbprint of the public key (shared/keys.ts keyId). */
  readonly keyId: string;
  /** Raw 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** True only for the reproducible sandbox key. */
  readonly devKey: boolean;
  /** 64-byte Ed25519 signature over `message`. */
  sign(message: Uint8Array): Uint8Array;
}

/** RFC 8410 §7 OneAsymmetricKey for Ed25519: this 16-byte DER prefix, then the 32-byte seed. */
const RFC8410_ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** RFC 8410 §4 SubjectPublicKeyInfo for Ed25519: this 12-byte prefix, then the public key. */
const RFC8410_ED25519_SPKI_PREFIX_LENGTH = 12;

export const PRODUCTION_KEY_FILE = path.join('keys', 'production-ed25519.pem');

class KeyObjectSigner implements Signer {
  readonly keyId: string;
  readonly publicKey: Uint8Array;
  readonly devKey: boolean;
  readonly #privateKey: KeyObject;

  constructor(privateKey: KeyObject, devKey: boolean) {
    if (privateKey.asymmetricKeyType !== 'ed25519') {
      throw new Error(`expected an Ed25519 private key, got ${privateKey.asymmetricKeyType ?? privateKey.type}`);
    }
    const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
    this.publicKey = new Uint8Array(spki.subarray(RFC8410_ED25519_SPKI_PREFIX_LENGTH));
    this.keyId = keyId(this.publicKey);
    this.devKey = devKey;
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

export function signerFromSeed(seed: Uint8Array, devKey: boolean): Signer {
  if (seed.length !== 32) throw new Error(`expected a 32-byte Ed25519 seed, got ${seed.length} bytes`);
  const der = Buffer.concat([RFC8410_ED25519_PKCS8_PREFIX, seed]);
  return new KeyObjectSigner(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }), devKey);
}

/** The reproducible sandbox dev key (DESIGN.md §3). */
export function createSandboxSigner(): Signer {
  return signerFromSeed(sandboxSeed(), true);
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
  return new KeyObjectSigner(readKeyFile(file), false);
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
