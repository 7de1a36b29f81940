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
import type { Logger } from '../log.ts';

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
  /**
   * The user PIN, resolved from its secret reference by the caller at startup and again at
   * each new login after a lost session; never kept here.
   */
  pin: () => string;
  createKey: boolean;
  log?: Logger;
}

export function openPkcs11Signer(o: Pkcs11SignerOptions): Signer {
  const lib = new pkcs11js.PKCS11();
  try {
    lib.load(o.module);
  } catch (err) {
    throw new SignerSetupError(`cannot load the PKCS#11 module ${o.module}: ${(err as Error).message}`);
  }
  let session: Buffer | undefined;
  try {
    initialize(lib);
    session = openSession(lib, o);
    let keys = findKeyPair(lib, session, o.keyLabel);
    if (!keys) {
      if (!o.createKey) {
        throw new SignerSetupError(`token "${o.tokenLabel}" has no Ed25519 key pair labelled "${o.keyLabel}"; create one (README "Signing custody") or set SVC_PKCS11_CREATE_KEY=1`);
      }
      keys = generateKeyPair(lib, session, o.keyLabel);
    }
    assertNonExportable(lib, session, keys.privateKey, o.keyLabel);
    const publicKey = readPublicKey(lib, session, keys.publicKey, o.keyLabel);
    return new Pkcs11Signer(lib, o, { session, privateKey: keys.privateKey }, publicKey);
  } catch (err) {
    if (session) tryQuietly(() => lib.C_CloseSession(session!));
    tryQuietly(() => lib.C_Finalize());
    throw err;
  }
}

function initialize(lib: pkcs11js.PKCS11): void {
  try {
    lib.C_Initialize();
  } catch (err) {
    // Another user of the same module in this process initialised it already (PKCS#11 §5.4).
    if (!isPkcs11(err, pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw setupError('C_Initialize', err);
  }
}

/** A read-write session on the labelled token, logged in as its user. */
function openSession(lib: pkcs11js.PKCS11, o: Pkcs11SignerOptions): Buffer {
  const session = lib.C_OpenSession(findSlot(lib, o.tokenLabel), pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    lib.C_Login(session, pkcs11js.CKU_USER, o.pin());
  } catch (err) {
    // Login state is per token and application: another session of ours may hold it.
    if (!isPkcs11(err, pkcs11js.CKR_USER_ALREADY_LOGGED_IN)) {
      tryQuietly(() => lib.C_CloseSession(session));
      throw err instanceof SignerSetupError ? err : setupError('C_Login (check the PIN reference)', err);
    }
  }
  return session;
}

/**
 * What a token answers when our session or login is gone: the token was reset or removed, an
 * HSM failed over, or something closed every session of this application (PKCS#11 §5.6,
 * C_CloseAllSessions). A new session and login may sign again.
 */
const SESSION_LOST: ReadonlySet<number> = new Set([
  pkcs11js.CKR_SESSION_HANDLE_INVALID,
  pkcs11js.CKR_SESSION_CLOSED,
  pkcs11js.CKR_USER_NOT_LOGGED_IN,
  pkcs11js.CKR_KEY_HANDLE_INVALID,
  pkcs11js.CKR_OBJECT_HANDLE_INVALID,
  pkcs11js.CKR_DEVICE_REMOVED,
  pkcs11js.CKR_TOKEN_NOT_PRESENT,
  pkcs11js.CKR_CRYPTOKI_NOT_INITIALIZED,
]);

class Pkcs11Signer implements Signer {
  readonly keyId: string;
  readonly devKey = false;
  readonly custody: SignerCustody;
  readonly #lib: pkcs11js.PKCS11;
  readonly #options: Pkcs11SignerOptions;
  #handles: { session: Buffer; privateKey: Buffer };

  constructor(lib: pkcs11js.PKCS11, options: Pkcs11SignerOptions, handles: { session: Buffer; privateKey: Buffer }, readonly publicKey: Uint8Array) {
    this.#lib = lib;
    this.#options = options;
    this.#handles = handles;
    this.keyId = keyId(publicKey);
    this.custody = {
      kind: 'pkcs11',
      managed: true,
      nonExportable: true,
      locators: { module: options.module, token_label: options.tokenLabel, key_label: options.keyLabel },
      description: 'an Ed25519 key held on a PKCS#11 token, CKA_SENSITIVE and not CKA_EXTRACTABLE (checked at startup): the token signs, the key never leaves it',
    };
  }

  sign(message: Uint8Array): Uint8Array {
    try {
      return this.#signOnce(message);
    } catch (err) {
      if (!(err instanceof pkcs11js.Pkcs11Error && SESSION_LOST.has(err.code))) throw unavailable(err);
      this.#reopen(pkcs11Name(err));
      try {
        return this.#signOnce(message);
      } catch (again) {
        throw unavailable(again);
      }
    }
  }

  #signOnce(message: Uint8Array): Uint8Array {
    const { session, privateKey } = this.#handles;
    this.#lib.C_SignInit(session, { mechanism: CKM_EDDSA }, privateKey);
    return new Uint8Array(this.#lib.C_Sign(session, Buffer.from(message), Buffer.alloc(64)));
  }

  /**
   * A new session and login, and the key found by its label again: only the key this service
   * started with, whose public key it publishes, may sign. Failing that, the seal is refused and
   * the next one tries again, so the service signs once the token or the key is back.
   */
  #reopen(lost: string): void {
    const lib = this.#lib;
    const o = this.#options;
    const fields = { worker: 'pkcs11-signer', reason: `${lost} from C_Sign` };
    tryQuietly(() => lib.C_CloseSession(this.#handles.session));
    let session: Buffer | undefined;
    try {
      initialize(lib);
      session = openSession(lib, o);
      const keys = findKeyPair(lib, session, o.keyLabel);
      if (!keys) throw new SignerSetupError(`token "${o.tokenLabel}" has no key labelled "${o.keyLabel}" any more`);
      assertNonExportable(lib, session, keys.privateKey, o.keyLabel);
      if (keyId(readPublicKey(lib, session, keys.publicKey, o.keyLabel)) !== this.keyId) {
        throw new SignerSetupError(`the key labelled "${o.keyLabel}" is not the key this service started with (${this.keyId}); put that key back, or restart the service to publish the new one`);
      }
      this.#handles = { session, privateKey: keys.privateKey };
      o.log?.warn('PKCS#11 session reopened', fields);
    } catch (err) {
      if (session) tryQuietly(() => lib.C_CloseSession(session!));
      const reason = err instanceof SignerSetupError ? err.message : pkcs11Name(err);
      o.log?.warn('PKCS#11 session not reopened', { ...fields, reason: `${fields.reason}; ${reason}` });
      throw new SignerUnavailableError('pkcs11', `the token ended the session and a new one failed: ${reason}`);
    }
  }

  close(): void {
    tryQuietly(() => this.#lib.C_CloseSession(this.#handles.session));
    tryQuietly(() => this.#lib.C_Finalize());
  }

  toJSON(): Record<string, unknown> {
    return { keyId: this.keyId, custody: this.custody };
  }
}

function unavailable(err: unknown): SignerUnavailableError {
  return new SignerUnavailableError('pkcs11', `${pkcs11Name(err)} from C_Sign`);
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
