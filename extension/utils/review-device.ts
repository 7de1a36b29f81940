/**
 * The reviewer's side of review context in the extension: this browser profile's device key,
 * and a paused action's context opened here and checked against the sealed record.
 *
 * - The device key is an X25519 pair made by WebCrypto with a non-extractable private key
 *   (extractable = false: no script, ours included, can read its bytes), kept in the
 *   extension's IndexedDB as the CryptoKey object itself (structured clone keeps it
 *   non-extractable), one per browser profile. Only the raw public key is registered on the
 *   signed-in person (POST /account/me/review-keys, sent by the background with the person's
 *   credential); it is registered again when the service no longer lists it as active.
 * - The ciphertext sealed to this device (GET /v1/reviews/{action_key}/context, fetched by the
 *   background) is opened here in the popup with HPKE (RFC 9180, shared/hpke.ts), bound to the
 *   action_key and the payload_hash of the record whose seal the background verified against
 *   pinned keys, never a hash the companion names beside the ciphertext. payload_hash is then
 *   recomputed from the plaintext (checkReviewContext): a match is "exactly what was gated".
 * - The plaintext is returned to the caller only (the panel keeps it in component state); it
 *   is never stored and never sent in a message.
 */
import { toBase64Url } from '../../shared/encoding.ts';
import { rawPublicKey, readReviewContext } from '../../shared/hpke.ts';
import type { ContextCheck, ReviewContextDocument } from '../../shared/hpke.ts';
import { sendMessage } from './messages.ts';
import type { ReviewContextCiphertext, ReviewKeyView } from './messages.ts';

/** The companion calls the popup needs, made by the background (which holds the credential). */
export interface ReviewDevicePorts {
  keys(): Promise<ReviewKeyView[] | null>;
  register(publicKey: string, label: string): Promise<ReviewKeyView>;
  context(actionKey: string, keyId: string): Promise<ReviewContextCiphertext>;
}

export const messagePorts: ReviewDevicePorts = {
  keys: () => sendMessage('reviews.keys', {}),
  register: (public_key, label) => sendMessage('reviews.registerKey', { public_key, label }),
  context: (action_key, key_id) => sendMessage('reviews.context', { action_key, key_id }),
};

/** This profile's review device: its key pair and the id the service registered it under. */
export interface ReviewDevice {
  keyId: string;
  pair: CryptoKeyPair;
}

/** Where the device is kept: one record in a small IndexedDB store of the extension's origin. */
export interface DeviceStore {
  get(): Promise<ReviewDevice | undefined>;
  put(device: ReviewDevice): Promise<void>;
}

const DB_NAME = 'action-gate-review-device';
const STORE = 'device';
const RECORD = 'current';

export function idbDeviceStore(factory: IDBFactory = indexedDB): DeviceStore {
  const open = () =>
    new Promise<IDBDatabase>((resolve, reject) => {
      const req = factory.open(DB_NAME, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  const run = async <T>(mode: IDBTransactionMode, fn: (s: IDBObjectStore) => IDBRequest): Promise<T> => {
    const db = await open();
    try {
      return await new Promise<T>((resolve, reject) => {
        const tx = db.transaction(STORE, mode);
        const req = fn(tx.objectStore(STORE));
        tx.oncomplete = () => resolve(req.result as T);
        tx.onerror = () => reject(tx.error);
      });
    } finally {
      db.close();
    }
  };
  return {
    get: () => run<ReviewDevice | undefined>('readonly', (s) => s.get(RECORD)),
    put: async (device) => {
      await run('readwrite', (s) => s.put(device, RECORD));
    },
  };
}

/**
 * This profile's device, registered for the signed-in person: the stored one while the service
 * lists it as active with the same public key, otherwise a new pair made and registered now.
 * Null when the credential is not a person's (a service account has no devices).
 */
export async function reviewDevice(ports: ReviewDevicePorts, store: DeviceStore, label = deviceLabel()): Promise<ReviewDevice | null> {
  const listed = await ports.keys();
  if (listed === null) return null;
  const stored = await store.get();
  if (stored) {
    const publicKey = toBase64Url(await rawPublicKey(stored.pair.publicKey));
    if (listed.some((k) => k.id === stored.keyId && k.status === 'active' && k.public_key === publicKey)) return stored;
  }
  const pair = (await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])) as CryptoKeyPair;
  const key = await ports.register(toBase64Url(await rawPublicKey(pair.publicKey)), label);
  const device = { keyId: key.id, pair };
  await store.put(device);
  return device;
}

export function deviceLabel(ua = typeof navigator === 'undefined' ? '' : navigator.userAgent): string {
  const browser = /Firefox\//.test(ua) ? 'Firefox' : /Edg\//.test(ua) ? 'Edge' : /Chrome\//.test(ua) ? 'Chrome' : 'browser';
  return `Browser extension · ${browser}`.slice(0, 64);
}

export type ReviewContextState =
  | { kind: 'loading' }
  /** The credential is a service account's: no context can be sealed to it. */
  | { kind: 'no_device' }
  | { kind: 'not_shared' }
  | { kind: 'expired' }
  | { kind: 'refused'; why: string }
  | { kind: 'error'; message: string }
  | { kind: 'opened'; doc: ReviewContextDocument; check: ContextCheck };

/**
 * Whether the context lets an approval be sent: opened and exactly what was gated, or known to be
 * absent (never shared, expired, or no device to share it with). Loading, refused, mismatched or
 * unreadable context keeps Approve disabled.
 */
export function contextAllowsApproval(state: ReviewContextState): boolean {
  if (state.kind === 'opened') return state.check.match;
  return state.kind === 'not_shared' || state.kind === 'expired' || state.kind === 'no_device';
}

/**
 * Fetches, opens and checks the context of one paused action for this device. `sealedPayloadHash`
 * is the payload_hash of the record's verified seal; null when the seal did not verify.
 */
export async function loadReviewContext(
  actionKey: string,
  sealedPayloadHash: string | null,
  ports: ReviewDevicePorts = messagePorts,
  store: DeviceStore = idbDeviceStore(),
): Promise<ReviewContextState> {
  const device = await reviewDevice(ports, store);
  if (device === null) return { kind: 'no_device' };
  const sealed = await ports.context(actionKey, device.keyId);
  if (sealed.status !== 'sealed') return { kind: sealed.status };
  if (sealedPayloadHash === null) return { kind: 'refused', why: 'the action’s sealed record did not verify against the pinned keys, so there is nothing to check the context against' };
  return readReviewContext(device.pair, sealed, { action_key: actionKey, payload_hash: sealedPayloadHash });
}
