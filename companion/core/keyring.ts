/**
 * The service's signing keys and their public face, /.well-known/service-keys.json
 * (DESIGN.md §3: an RFC 8037 JWKS with status and dev_key per key).
 *
 * Signing is chosen by tenant kind, never by the caller: a production key never signs a
 * sandbox record, nor the reverse (DESIGN.md §3).
 */
import { publicKeyToJwk } from '../../shared/keys.ts';
import type { KeyStatus, ServiceJwks } from '../../shared/types.ts';
import type { TenantKind } from './auth.ts';
import type { Signer } from './signer.ts';
import type { RetiredKey } from './signers/key-history.ts';

export interface PublishedKey {
  keyId: string;
  publicKey: Uint8Array;
  status: KeyStatus;
  devKey: boolean;
}

export class Keyring {
  readonly sandbox: Signer;
  readonly production: Signer;
  readonly #jwks: ServiceJwks;
  readonly #byKeyId: Map<string, PublishedKey>;

  /**
   * `retired`: earlier production keys (core/signers/key-history.ts), published so that what
   * they signed keeps verifying; none of them ever signs again.
   */
  constructor(signers: { sandbox: Signer; production: Signer; retired?: readonly RetiredKey[] }) {
    const { sandbox, production, retired = [] } = signers;
    if (!sandbox.devKey) throw new Error('the sandbox signer must be the dev key (dev_key: true)');
    if (production.devKey) throw new Error('the production signer must not be a dev key');
    if (sandbox.keyId === production.keyId) throw new Error('the production key must differ from the sandbox key');
    this.sandbox = sandbox;
    this.production = production;
    const published: PublishedKey[] = [
      { keyId: sandbox.keyId, publicKey: sandbox.publicKey, status: 'sandbox', devKey: true },
      { keyId: production.keyId, publicKey: production.publicKey, status: 'active', devKey: false },
      ...retired.map((k): PublishedKey => ({ keyId: k.keyId, publicKey: k.publicKey, status: 'retired', devKey: false })),
    ];
    this.#byKeyId = new Map(published.map((k) => [k.keyId, k]));
    this.#jwks = Object.freeze({
      keys: published.map((k) => Object.freeze(publicKeyToJwk(k.publicKey, { status: k.status, dev_key: k.devKey }))),
    });
  }

  /** The only way to pick a signing key: by the authenticated tenant's kind. */
  signerFor(kind: TenantKind): Signer {
    return kind === 'production' ? this.production : this.sandbox;
  }

  /** A published key by id (for verification and key_status), or undefined. */
  find(keyId: string): PublishedKey | undefined {
    return this.#byKeyId.get(keyId);
  }

  /** Releases the signers' key service sessions and threads (shutdown). */
  close(): void {
    this.sandbox.close?.();
    this.production.close?.();
  }

  /** The public key set: public members only, never private material. */
  jwks(): ServiceJwks {
    return this.#jwks;
  }
}
