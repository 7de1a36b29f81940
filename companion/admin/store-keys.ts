/**
 * The public keys a store's evidence was signed with, as a JWKS (DESIGN.md §3: RFC 8037 with
 * status and dev_key): the sandbox dev key, which anyone can re-derive, and every production
 * key the store recorded in production_keys (core/signers/key-history.ts): the active one and
 * the retired ones. Public members only; the private key never passes through here.
 */
import { keyId, publicKeyToJwk, sandboxJwk } from '../../shared/keys.ts';
import type { ServiceJwks } from '../../shared/types.ts';
import type { Db } from '../core/db.ts';

export interface StoredProductionKey {
  keyId: string;
  publicKey: Uint8Array;
  retired: boolean;
}

export function storedProductionKeys(db: Db): StoredProductionKey[] {
  const rows = db
    .prepare<[], { key_id: string; public_key: Buffer; retired_at: string | null }>('SELECT key_id, public_key, retired_at FROM production_keys ORDER BY first_used_at, key_id')
    .all();
  return rows.map((r) => ({ keyId: r.key_id, publicKey: new Uint8Array(r.public_key), retired: r.retired_at !== null }));
}

/** The store's public key set. A row whose key_id is not its key's RFC 7638 thumbprint is left out (and reported by verify-store). */
export function storeJwks(db: Db): ServiceJwks {
  const production = storedProductionKeys(db)
    .filter((k) => k.publicKey.length === 32 && keyId(k.publicKey) === k.keyId)
    .map((k) => publicKeyToJwk(k.publicKey, { status: k.retired ? 'retired' : 'active', dev_key: false }));
  return { keys: [sandboxJwk(), ...production] };
}
