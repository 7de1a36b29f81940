/**
 * The verifier's trust anchor: the tenant's published JWKS (/.well-known/service-keys.json),
 * indexed by key id. Anything not in this set fails the key-identity check.
 */
import { jwkToPublicKey, keyId, parseJwks, sandboxJwk } from './keys.ts';
import type { KeyStatus, ServiceJwks } from './types.ts';

export interface TrustedKey {
  kid: string;
  publicKey: Uint8Array;
  status: KeyStatus;
  devKey: boolean;
  /** False when the published kid is not the RFC 7638 thumbprint of the key it names. */
  kidMatchesKey: boolean;
}

export type TrustedKeySet = ReadonlyMap<string, TrustedKey>;

/** Parses (strictly) and indexes a JWKS. Throws SvcError on a malformed set. */
export function trustedKeySet(jwks: unknown): TrustedKeySet {
  const parsed: ServiceJwks = parseJwks(jwks);
  const set = new Map<string, TrustedKey>();
  for (const jwk of parsed.keys) {
    const publicKey = jwkToPublicKey(jwk);
    set.set(jwk.kid, {
      kid: jwk.kid,
      publicKey,
      status: jwk.status,
      devKey: jwk.dev_key,
      kidMatchesKey: keyId(publicKey) === jwk.kid,
    });
  }
  return set;
}

/**
 * The set an offline verifier trusts when given no keys: only the sandbox dev key, which
 * anyone can re-derive (DESIGN.md §3). Production evidence needs the tenant's JWKS.
 */
export function sandboxOnlyKeySet(): TrustedKeySet {
  return trustedKeySet({ keys: [sandboxJwk()] });
}
