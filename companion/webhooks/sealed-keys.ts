/**
 * The minted webhook signing keys at rest (migration 0020): each is stored sealed under the
 * store's key-encryption key (core/secrets/envelope.ts), bound to its tenant and row. Both
 * engines' stores open a row through `openStoredKey`; the start runs `sealSigningKeysAtStart`
 * before the service serves: it refuses a store whose keys were sealed under a KEK this process
 * does not hold, and seals any key still in clear (rows written before 0020).
 */
import { SealedSecretError, noStoreKey } from '../core/secrets/envelope.ts';
import type { StoreCipher } from '../core/secrets/envelope.ts';
import { StoreKekError } from '../core/secrets/store-kek.ts';
import { signingKeyBinding } from './store.ts';
import type { WebhookStore } from './store.ts';

export interface StoredKey {
  id: number;
  tenant_id: string;
  key: string;
  kek_id: string | null;
}

/** Opened keys kept per cipher, at most this many (then the cache starts over). */
const OPENED_KEPT = 1024;

/**
 * Keys this process has opened, per cipher, by everything the opening depends on: the sealed
 * text (its nonce and tag are fresh at every seal), the KEK id and the row it is bound to. The
 * delivery worker reads a target's keys at every claim; opening one is an AES-GCM decryption
 * (about 15 µs), for a value that changes only when the key is rotated or resealed, and then
 * its sealed text changes too, so an entry is never stale. Each cipher has a cache of its own,
 * holding only what that cipher opened.
 */
const opened = new WeakMap<StoreCipher, Map<string, string>>();

/** A stored key, opened; a clear one is refused (the start seals every clear key before it serves). */
export function openStoredKey(cipher: StoreCipher | undefined, r: StoredKey): string {
  if (r.kek_id === null) throw new SealedSecretError('unreadable', `webhook_signing_keys.key of row ${r.id} is still in clear; the service seals it at its next start`);
  if (!cipher) throw noStoreKey(`webhook_signing_keys.key of row ${r.id}`);
  let cache = opened.get(cipher);
  if (!cache) opened.set(cipher, (cache = new Map()));
  const id = `${r.kek_id}\n${r.tenant_id}\n${r.id}\n${r.key}`;
  const known = cache.get(id);
  if (known !== undefined) return known;
  const key = cipher.open({ sealed: r.key, kekId: r.kek_id }, signingKeyBinding(r.tenant_id, r.id));
  if (cache.size >= OPENED_KEPT) cache.clear();
  cache.set(id, key);
  return key;
}

/** Checks that every stored key opens with this cipher's KEKs, then seals the clear ones; returns how many it sealed. */
export async function sealSigningKeysAtStart(webhooks: Pick<WebhookStore, 'sealedKeyCounts' | 'resealSigningKeys'>, cipher: StoreCipher): Promise<number> {
  const unknown = (await webhooks.sealedKeyCounts()).filter((c) => c.kekId !== null && !cipher.holds(c.kekId));
  if (unknown.length > 0) {
    const n = unknown.reduce((sum, c) => sum + c.count, 0);
    throw new StoreKekError(
      `${n} stored webhook signing key(s) are sealed under ${unknown.map((c) => c.kekId).join(', ')}, which this service does not hold (it holds ${cipher.kekIds.join(', ')}): set SVC_STORE_KEK_REF, or SVC_STORE_KEK_PREVIOUS_REFS, to the key they were sealed under`,
    );
  }
  return webhooks.resealSigningKeys('clear');
}
