/**
 * Production signing with an Ed25519 key held on a PKCS#11 token (an HSM, a cloud HSM, or
 * SoftHSM2 for development), through pkcs11js. The private key never leaves the token: we
 * only ask the token to sign (CKM_EDDSA, PKCS#11 v3.0 §2.3.14, pure Ed25519 per RFC 8032).
 *
 * At startup the key pair is found by CKA_LABEL (or, with SVC_PKCS11_CREATE_KEY=1 and no such
 * key, generated on the token with CKA_EXTRACTABLE=false and CKA_SENSITIVE=true), and a key the
 * token would let anyone read out is refused: that custody would be no better than a key file.
 */
import pkcs11js from 'pkcs11js';
import { keyId } from '../../../shared/keys.ts';
import { SignerSetupError, SignerUnavailableError } from '../signer.ts';
import type { Signer, SignerCustody } from '../signer.ts';

/** PKCS#11 v3.0 numbers pkcs11js 2.1 does not export (v3.0 §6.3, §2.3.14). */
const CKK_EC_EDWARDS = 0x40;
const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
const CKM_EDDSA = 0x1057;
/** CKA_EC_PARAMS for Ed25519: the DER OID 1.3.101.112 (RFC 8410 §3). */
const ED25519_EC_PARAMS = Buffer.from('06032b6570', 'hex');

export interface Pkcs11SignerOptions {
  module: string;
  tokenLabel: string;
  keyLabel: string;
  /** The user PIN, resolved from its secret reference by the caller; never stored here. */
  pin: string;
  createKey: boolean;
}

export function openPkcs11Signer(o: Pkcs11SignerOptions): Signer {
  const lib = new pkcs11js.PKCS11();
  try {
    lib.load(o.module);
  } catch (err) {
    throw new SignerSetupError(`cannot load the PKCS#11 module ${o.module}: ${(err as Error).message}`);
  }
  try {
    lib.C_Initialize();
  } catch (err) {
    // Another user of the same module in this process initialised it already (PKCS#11 §5.4).
    if (!isPkcs11(err, pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw setupError('C_Initialize', err);
  }
  let session: Buffer | undefined;
  try {
    const slot = findSlot(lib, o.tokenLabel);
    session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      lib.C_Login(session, pkcs11js.CKU_USER, o.pin);
    } catch (err) {
      // Login state is per token and application: another session of ours may hold it.
      if (!isPkcs11(err, pkcs11js.CKR_USER_ALREADY_LOGGED_IN)) throw setupError('C_Login (check the PIN reference)', err);
    }
    let keys = findKeyPair(lib, session, o.keyLabel);
    if (!keys) {
      if (!o.createKey) {
        throw new SignerSetupError(`token "${o.tokenLabel}" has no Ed25519 key pair labelled "${o.keyLabel}"; create one (README "Signing custody") or set SVC_PKCS11_CREATE_KEY=1`);
      }
      keys = generateKeyPair(lib, session, o.keyLabel);
    }
    assertNonExportable(lib, session, keys.privateKey, o.keyLabel);
    const publicKey = readPublicKey(lib, session, keys.publicKey, o.keyLabel);
    return new Pkcs11Signer(lib, session, keys.privateKey, publicKey, {
      kind: 'pkcs11',
      managed: true,
      nonExportable: true,
      locators: { module: o.module, token_label: o.tokenLabel, key_label: o.keyLabel },
      description: 'an Ed25519 key held on a PKCS#11 token, CKA_SENSITIVE and not CKA_EXTRACTABLE (checked at startup): the token signs, the key never leaves it',
    });
  } catch (err) {
    if (session) tryQuietly(() => lib.C_CloseSession(session!));
    tryQuietly(() => lib.C_Finalize());
    throw err;
  }
}

class Pkcs11Signer implements Signer {
  readonly keyId: string;
  readonly devKey = false;
  readonly #lib: pkcs11js.PKCS11;
  readonly #session: Buffer;
  readonly #privateKey: Buffer;

  constructor(lib: pkcs11js.PKCS11, session: Buffer, privateKey: Buffer, readonly publicKey: Uint8Array, readonly custody: SignerCustody) {
    this.#lib = lib;
    this.#session = session;
    this.#privateKey = privateKey;
    this.keyId = keyId(publicKey);
  }

  sign(message: Uint8Array): Uint8Array {
    try {
      this.#lib.C_SignInit(this.#session, { mechanism: CKM_EDDSA }, this.#privateKey);
      return new Uint8Array(this.#lib.C_Sign(this.#session, Buffer.from(message), Buffer.alloc(64)));
    } catch (err) {
      throw new SignerUnavailableError('pkcs11', `${pkcs11Name(err)} from C_Sign`);
    }
  }

  close(): void {
    tryQuietly(() => this.#lib.C_CloseSession(this.#session));
    tryQuietly(() => this.#lib.C_Finalize());
  }

  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, custody: this.custody };
  }
}

function findSlot(lib: pkcs11js.PKCS11, tokenLabel: string): Buffer {
  const labels: string[] = [];
  for (const slot of lib.C_GetSlotList(true)) {
    // CK_TOKEN_INFO.label is 32 bytes, blank-padded (PKCS#11 §3.2).
    const label = lib.C_GetTokenInfo(slot).label.trim();
    if (label === tokenLabel) return slot;
    // An uninitialised token (SoftHSM2 always offers one) has a blank label: not worth naming.
    if (label !== '') labels.push(label);
  }
  throw new SignerSetupError(`no PKCS#11 token labelled "${tokenLabel}" (tokens present: ${labels.length > 0 ? labels.map((l) => `"${l}"`).join(', ') : 'none'})`);
}

function findOne(lib: pkcs11js.PKCS11, session: Buffer, objectClass: number, label: string): Buffer | undefined {
  lib.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: objectClass },
    { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  try {
    const found = lib.C_FindObjects(session, 2);
    if (found.length > 1) throw new SignerSetupError(`more than one Ed25519 key labelled "${label}" on the token: labels must name one key pair`);
    return found[0];
  } finally {
    lib.C_FindObjectsFinal(session);
  }
}

function findKeyPair(lib: pkcs11js.PKCS11, session: Buffer, label: string): { privateKey: Buffer; publicKey: Buffer } | undefined {
  const privateKey = findOne(lib, session, pkcs11js.CKO_PRIVATE_KEY, label);
  const publicKey = findOne(lib, session, pkcs11js.CKO_PUBLIC_KEY, label);
  if (!privateKey && !publicKey) return undefined;
  if (!privateKey || !publicKey) throw new SignerSetupError(`the token holds only the ${privateKey ? 'private' : 'public'} half of the key labelled "${label}"`);
  return { privateKey, publicKey };
}

function generateKeyPair(lib: pkcs11js.PKCS11, session: Buffer, label: string): { privateKey: Buffer; publicKey: Buffer } {
  const common = [
    { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_LABEL, value: label },
  ];
  try {
    return lib.C_GenerateKeyPair(
      session,
      { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
      [...common, { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY }, { type: pkcs11js.CKA_VERIFY, value: true }, { type: pkcs11js.CKA_EC_PARAMS, value: ED25519_EC_PARAMS }],
      [
        ...common,
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_SENSITIVE, value: true },
        { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        { type: pkcs11js.CKA_SIGN, value: true },
      ],
    );
  } catch (err) {
    throw setupError('C_GenerateKeyPair (Ed25519, CKM_EC_EDWARDS_KEY_PAIR_GEN)', err);
  }
}

/** A CK_BBOOL attribute is one byte (PKCS#11 §3.1). */
const bool = (value: Buffer | undefined): boolean => value !== undefined && value.length === 1 && value[0] !== 0;

function assertNonExportable(lib: pkcs11js.PKCS11, session: Buffer, privateKey: Buffer, label: string): void {
  const [extractable, sensitive] = lib.C_GetAttributeValue(session, privateKey, [{ type: pkcs11js.CKA_EXTRACTABLE }, { type: pkcs11js.CKA_SENSITIVE }]);
  const problems = [
    ...(bool(extractable?.value as Buffer | undefined) ? ['CKA_EXTRACTABLE is true'] : []),
    ...(bool(sensitive?.value as Buffer | undefined) ? [] : ['CKA_SENSITIVE is false']),
  ];
  if (problems.length > 0) {
    throw new SignerSetupError(
      `refusing the PKCS#11 key labelled "${label}": ${problems.join(' and ')}, so its private key can be read off the token; ` +
        'production receipts need a non-exportable key (generate a new one with CKA_EXTRACTABLE=false, CKA_SENSITIVE=true)',
    );
  }
}

/**
 * CKA_EC_POINT of an Ed25519 public key is the DER OCTET STRING `04 20` + the 32-byte key
 * (PKCS#11 v3.0 §2.3.5): the 04 is the OCTET STRING tag, not an uncompressed-point marker.
 * Some tokens return the bare 32 bytes; both are accepted.
 */
function readPublicKey(lib: pkcs11js.PKCS11, session: Buffer, publicKey: Buffer, label: string): Uint8Array {
  const [point] = lib.C_GetAttributeValue(session, publicKey, [{ type: pkcs11js.CKA_EC_POINT }]);
  const value = point?.value as Buffer | undefined;
  if (value?.length === 34 && value[0] === 0x04 && value[1] === 0x20) return new Uint8Array(value.subarray(2));
  if (value?.length === 32) return new Uint8Array(value);
  throw new SignerSetupError(`the public key labelled "${label}" has a CKA_EC_POINT of ${value?.length ?? 0} bytes, not an Ed25519 point`);
}

function isPkcs11(err: unknown, code: number): boolean {
  return err instanceof pkcs11js.Pkcs11Error && err.code === code;
}

/** The CKR_ name of a Cryptoki error (pkcs11js puts it first in the message), never more. */
function pkcs11Name(err: unknown): string {
  if (err instanceof pkcs11js.Pkcs11Error) return /^CKR_[A-Z_]+/.exec(err.message)?.[0] ?? `CKR 0x${err.code.toString(16)}`;
  return 'an error';
}

function setupError(call: string, err: unknown): SignerSetupError {
  return new SignerSetupError(`PKCS#11 ${call} failed: ${pkcs11Name(err)}`);
}

function tryQuietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // Shutdown and error paths: the session or library may already be gone.
  }
}
