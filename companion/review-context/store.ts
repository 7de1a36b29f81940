/**
 * What the review-context capability needs from storage, independent of the engine
 * (./sqlite-store.ts, ./postgres-store.ts; migration 0021_review_context.sql). Every read and
 * write takes the tenant id from the credential (interface-spec Authentication 6), except the
 * orphan sweep's `eraseOrphans`, which works for the service across tenants.
 *
 * Raw-safe by construction: a review key is a public key and a label; a context row is an HPKE
 * ciphertext (RFC 9180 §6.1 enc, ct) that only the recipient device's private key opens, and
 * that key never reaches the service.
 */

export interface ReviewKeyRow {
  id: string;
  tenantId: string;
  personId: string;
  /** Raw X25519 public key, 32 bytes (RFC 7748 §5). */
  publicKey: Uint8Array;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface ContextRow {
  tenantId: string;
  actionKey: string;
  reviewKeyId: string;
  enc: Uint8Array;
  ct: Uint8Array;
  createdAt: string;
}

/** Who submitted a paused gate request: the principal and the credential (interface core/auth.ts AuthContext). */
export interface SubmitterRow {
  tenantId: string;
  actionKey: string;
  principalId: string | null;
  credentialId: string | null;
}

export interface ReviewContextStore {
  /** Records who submitted a paused gate request (inside the gate seal's transaction). */
  recordSubmitter(row: SubmitterRow): Promise<void>;
  findSubmitter(tenantId: string, actionKey: string): Promise<SubmitterRow | undefined>;
  /** Registers a key; 'taken' (nothing written) when the tenant already has this public key. */
  addKey(row: ReviewKeyRow): Promise<'added' | 'taken'>;
  /** A person's keys, revoked ones included, oldest first. */
  listKeys(tenantId: string, personId: string): Promise<ReviewKeyRow[]>;
  /** The tenant's keys not revoked, oldest first (the recipients are chosen among them). */
  activeKeys(tenantId: string): Promise<ReviewKeyRow[]>;
  /**
   * Revokes one of a person's keys and erases every ciphertext made for it (a lost device must
   * not keep a way in); false when the person has no such active key.
   */
  revokeKey(tenantId: string, personId: string, keyId: string, at: string): Promise<boolean>;
  /** Records a key's use (a context fetched for it). */
  touchKey(tenantId: string, keyId: string, at: string): Promise<void>;
  /** Stores the ciphertexts of one action, replacing any stored for it before, in one go. */
  replaceContexts(tenantId: string, actionKey: string, rows: ContextRow[]): Promise<void>;
  /** The ciphertext for one recipient key, if any. */
  findContext(tenantId: string, actionKey: string, reviewKeyId: string): Promise<ContextRow | undefined>;
  /** How many ciphertexts are held for each of these actions (absent: none). */
  countContexts(tenantId: string, actionKeys: readonly string[]): Promise<Map<string, number>>;
  /** Erases every ciphertext of one action (its submitter stays: the review is still open); returns how many. */
  eraseContexts(tenantId: string, actionKey: string): Promise<number>;
  /** The review ended: erases the action's ciphertexts and its submitter row. */
  forgetAction(tenantId: string, actionKey: string): Promise<void>;
  /**
   * Erases, across tenants, at most `limit` ciphertexts whose action has no review item still
   * open at `now` (decided, expired, window ended, or never paused), and as many submitter rows
   * of such actions; returns how many ciphertexts.
   */
  eraseOrphans(now: string, limit: number): Promise<number>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Reviewers' device keys and the review context sealed to them (review-context capability). */
    readonly reviewContexts: ReviewContextStore;
  }
}
