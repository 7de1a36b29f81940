/**
 * What the evidence capability needs from storage, independent of the engine (the SQLite
 * implementation is ./sqlite-store.ts). Every read takes the tenant id from the credential
 * (interface-spec Authentication 6): another tenant's record is simply not found.
 */

export interface SealedRecordRow {
  tenantId: string;
  tenantSeq: number;
  actionKey: string;
  vertical: string;
  pack: string;
  kind: string;
  decision: string | null;
  status: string;
  reviewRoute: string | null;
  payloadHash: string;
  packetHash: string;
  /** The signed JCS text of the attestation, byte for byte. */
  attestation: string;
  attestationHash: string;
  signature: string;
  keyId: string;
  devKey: boolean;
  recordedAt: string;
  credits: number;
  /** Raw-safe extras returned with the record (next_step, catalog_refs, …), as JSON text. */
  details: string;
}

export interface LogHead {
  tenantSeq: number;
  attestationHash: string;
  recordedAt: string;
}

export interface EvidenceStore {
  /** The newest entry of the tenant's log, or undefined for an empty log. */
  logHead(tenantId: string): Promise<LogHead | undefined>;
  insertRecord(row: SealedRecordRow): Promise<void>;
  findRecord(tenantId: string, actionKey: string): Promise<SealedRecordRow | undefined>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Sealed records and the tenant logs they form (evidence capability). */
    readonly evidence: EvidenceStore;
  }
}
