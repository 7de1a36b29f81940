/**
 * Envelope encryption of the secrets the service itself must hold (today the webhook signing
 * keys it mints): each value is sealed with AES-256-GCM (NIST SP 800-38D) under a
 * key-encryption key (KEK) that never enters the database, with a fresh random 96-bit nonce
 * per value (SP 800-38D §8.2.2, the random construction; a KEK seals far fewer than the 2^32
 * values that bound allows). The KEK's id is stored beside each value, so values sealed under
 * an earlier KEK stay readable while they are re-wrapped under the current one.
 *
 * The associated data names the value's table, column, tenant and row (SP 800-38D §5.2.1.1,
 * "additional authenticated data"): a sealed value copied into another row, or another
 * tenant's row, fails authentication instead of opening there.
 *
 * Stored form: "v1." followed by base64url(nonce ‖ ciphertext ‖ 128-bit tag).
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const KEK_BYTES = 32;
const FORMAT = 'v1.';

/** The row a stored secret belongs to: its associated data. */
export interface SecretBinding {
  table: string;
  column: string;
  tenantId: string;
  rowId: number | string;
}

/** A value as stored: the sealed text and the id of the KEK that sealed it. */
export interface SealedSecret {
  sealed: string;
  kekId: string;
}

export type SealedSecretProblem = 'unknown_kek' | 'unreadable' | 'no_store_key';

/**
 * A stored secret cannot be opened. The message names the row and the KEK id, never a value;
 * callers turn it into a readiness detail or a refused start, never a 500.
 */
export class SealedSecretError extends Error {
  constructor(
    readonly problem: SealedSecretProblem,
    message: string,
  ) {
    super(message);
    this.name = 'SealedSecretError';
  }
}

/** One key-encryption key and where it came from (a setting's name, or the local file). */
export interface Kek {
  id: string;
  key: Buffer;
  source: string;
}

/**
 * The id stored beside each value: a MAC of a fixed label under the KEK, so it names the key
 * without being a digest of it and two operators' keys never share an id by accident.
 */
export function kekId(key: Buffer): string {
  return `kek_${createHmac('sha256', key).update('action-gate store KEK id v1').digest('hex').slice(0, 16)}`;
}

export function newKek(key: Buffer, source: string): Kek {
  if (key.length !== KEK_BYTES) throw new TypeError(`expected a ${KEK_BYTES}-byte KEK, got ${key.length} bytes`);
  return { id: kekId(key), key, source };
}

/**
 * A 32-byte key written as 64 hex digits or as base64 (standard or URL alphabet, padded or
 * not); undefined otherwise.
 */
export function parseKek(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(t)) return undefined;
  const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === KEK_BYTES ? key : undefined;
}

function associatedData(b: SecretBinding): Buffer {
  // A JSON array: unambiguous whatever the members hold.
  return Buffer.from(JSON.stringify(['action-gate stored secret v1', b.table, b.column, b.tenantId, String(b.rowId)]), 'utf8');
}

function where(b: SecretBinding): string {
  return `${b.table}.${b.column} of row ${String(b.rowId)}`;
}

/** Seals under the current KEK and opens under any KEK it holds (the current and earlier ones). */
export class StoreCipher {
  readonly current: Kek;
  readonly #keks: Map<string, Kek>;

  constructor(current: Kek, previous: readonly Kek[] = []) {
    this.current = current;
    this.#keks = new Map([...previous.map((k) => [k.id, k] as const), [current.id, current]]);
  }

  /** The ids of every KEK this cipher opens with, the current one first. */
  get kekIds(): string[] {
    return [this.current.id, ...[...this.#keks.keys()].filter((id) => id !== this.current.id)];
  }

  holds(id: string): boolean {
    return this.#keks.has(id);
  }

  seal(plaintext: string, binding: SecretBinding): SealedSecret {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(binding));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { sealed: FORMAT + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url'), kekId: this.current.id };
  }

  open(value: SealedSecret, binding: SecretBinding): string {
    const kek = this.#keks.get(value.kekId);
    if (!kek) {
      throw new SealedSecretError('unknown_kek', `${where(binding)} is sealed under ${value.kekId}, a key-encryption key this service does not hold (SVC_STORE_KEK_REF, SVC_STORE_KEK_PREVIOUS_REFS)`);
    }
    const raw = value.sealed.startsWith(FORMAT) ? Buffer.from(value.sealed.slice(FORMAT.length), 'base64url') : Buffer.alloc(0);
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SealedSecretError('unreadable', `${where(binding)} is not a sealed value`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', kek.key, raw.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(binding));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      // GCM authentication failed: another row's value, or altered bytes.
      throw new SealedSecretError('unreadable', `${where(binding)} does not open under ${value.kekId}: it was sealed for another row or altered`);
    }
  }
}

/** What a store opened without a cipher answers when asked for a sealed secret. */
export function noStoreKey(what: string): SealedSecretError {
  return new SealedSecretError('no_store_key', `${what}: this store was opened without the store's key-encryption key`);
}
