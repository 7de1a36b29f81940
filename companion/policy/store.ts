/**
 * What the tenant-policy capability needs from storage, independent of the engine (the SQLite
 * implementation is ./sqlite-store.ts). Versions are append-only (interface-spec "Tenant
 * policy": a PUT is a new version, never an edit in place), so there is no update or delete.
 * Every read takes the tenant id from the credential (interface-spec Authentication 6).
 */

export interface PolicyVersionRow {
  tenantId: string;
  /** A gate pack name: the `policy_pack` query parameter. */
  policyPack: string;
  /** 1, 2, 3, … per tenant and pack. */
  version: number;
  /** SHA-256 hex of the document's JCS bytes; committed as policy_digest by the seals it shapes. */
  digest: string;
  /** The digest of the version this one replaced; null for version 1. */
  previousDigest: string | null;
  /** The normalised policy document, as JCS text (policy/document.ts). */
  document: string;
  /** API key id of the caller that made this version; never the key. */
  actor: string;
  /** The receipt's signed recorded_at. */
  createdAt: string;
  /** The policy receipt sealed in the same transaction. */
  actionKey: string;
}

export interface PolicyStore {
  /** The newest version of a tenant's policy for a pack, or undefined when it has none. */
  current(tenantId: string, policyPack: string): Promise<PolicyVersionRow | undefined>;
  /**
   * Appends a version; false (nothing written) when that version number exists already: a
   * writer that read an older current version lost the race and must start over.
   */
  insertVersion(row: PolicyVersionRow): Promise<boolean>;
  /** Versions newest first, at most `limit`, only those below `beforeVersion` when given. */
  listVersions(tenantId: string, policyPack: string, options: { limit: number; beforeVersion?: number | undefined }): Promise<PolicyVersionRow[]>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Tenant policy versions per gate pack, append-only (policy capability). */
    readonly policy: PolicyStore;
  }
}
