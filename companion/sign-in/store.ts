/**
 * What sign-in needs from storage (migrations/0019): the tenant's OpenID Connect identity
 * provider and its email domains, IdP subjects linked to people, authorization requests in
 * flight, and device authorizations (RFC 8628). ./sqlite-store.ts and ./postgres-store.ts
 * implement it with the same statements; the rows map to records in ./rows.ts.
 */

export interface IdentityProviderRecord {
  tenantId: string;
  /** OpenID Connect Discovery 1.0 §4: the issuer URL, exactly as the provider names itself. */
  issuer: string;
  clientId: string;
  /** A secret reference (core/secret-refs.ts), never the secret; null for a public client. */
  clientSecretRef: string | null;
  /** Lowercase domains whose people sign in here; each names at most one tenant. */
  emailDomains: string[];
  createdAt: string;
  updatedAt: string;
}

/** An OpenID Connect authorization request in flight (its state is kept only as a digest). */
export interface OidcLoginRow {
  stateHash: Uint8Array;
  tenantId: string;
  nonce: string;
  codeVerifier: string;
  createdAt: string;
  expiresAt: string;
}

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'issued';

/** RFC 8628 §3.2: one device authorization request. */
export interface DeviceAuthorizationRecord {
  id: string;
  deviceCodeHash: Uint8Array;
  /** Eight characters of the RFC 8628 §6.1 alphabet, stored without the dash. */
  userCode: string;
  clientId: string;
  /** The capabilities the device asked for. */
  scope: string[];
  status: DeviceStatus;
  /** Set when a person decides it: their tenant, themselves, and what they granted. */
  tenantId: string | null;
  personId: string | null;
  grantedScope: string[] | null;
  /** The key issued to the device, once it collected the approval. */
  keyId: string | null;
  /** Seconds the device must wait between polls (RFC 8628 §3.5 slow_down adds 5). */
  pollInterval: number;
  lastPolledAt: string | null;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
}

export interface DeviceDecision {
  status: 'approved' | 'denied';
  tenantId: string;
  personId: string;
  grantedScope: string[] | null;
  at: string;
}

/** A key the device grant issued, as its person's listing shows it. */
export interface DeviceTokenRecord {
  keyId: string;
  clientId: string;
  capabilities: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  status: 'active' | 'revoked';
  revokedAt: string | null;
}

export interface LinkedSubject {
  personId: string;
  /** The no-secret, revoked key of the person that the subject's sessions name (migrations/0019). */
  sessionKeyId: string;
}

export interface SignInStore {
  /** Saves the tenant's provider and replaces its domains; 'domain_taken' (nothing written) when another tenant holds one. */
  putIdentityProvider(row: IdentityProviderRecord): Promise<'saved' | 'domain_taken'>;
  getIdentityProvider(tenantId: string): Promise<IdentityProviderRecord | undefined>;
  /** Removes the provider, its domains and its linked subjects; false when there was none. */
  deleteIdentityProvider(tenantId: string): Promise<boolean>;
  tenantForDomain(domain: string): Promise<string | undefined>;
  /** The tenant's person with this email digest (account/signup.ts emailDigest), if any. */
  personByEmailDigest(tenantId: string, digest: Uint8Array): Promise<string | undefined>;
  /** The person an IdP subject is linked to, and the key that anchors its sessions. */
  linkedPerson(tenantId: string, issuer: string, subject: string): Promise<LinkedSubject | undefined>;
  /** Links the subject; false (nothing written) when it was already linked. */
  linkSubject(tenantId: string, issuer: string, subject: string, link: LinkedSubject, at: string): Promise<boolean>;
  createLogin(row: OidcLoginRow): Promise<void>;
  /** Removes and returns the unexpired login with this state digest: each state is used once. */
  takeLogin(stateHash: Uint8Array, now: string): Promise<OidcLoginRow | undefined>;
  /** 'user_code_taken' (nothing written) when a live request already holds the user code. */
  createDeviceAuthorization(row: DeviceAuthorizationRecord): Promise<'created' | 'user_code_taken'>;
  deviceByCode(deviceCodeHash: Uint8Array): Promise<DeviceAuthorizationRecord | undefined>;
  deviceByUserCode(userCode: string): Promise<DeviceAuthorizationRecord | undefined>;
  recordPoll(id: string, at: string, pollInterval: number): Promise<void>;
  /** Decides a pending, unexpired request; false when it is no longer pending or has expired. */
  decideDevice(id: string, decision: DeviceDecision, now: string): Promise<boolean>;
  /** Marks an approved request issued with its key; false when it was not approved (issued already). */
  markIssued(id: string, keyId: string): Promise<boolean>;
  /** The person's keys issued by the device grant, newest first. */
  listDeviceTokens(tenantId: string, personId: string): Promise<DeviceTokenRecord[]>;
  /** Removes expired logins and requests nobody can use any more. */
  purgeExpired(now: string): Promise<void>;
}

/** This capability's member of every store (core/stores.ts: each owner declares its own). */
declare module '../core/stores.ts' {
  interface Stores {
    /** Identity providers, linked IdP subjects and device authorizations (sign-in capability). */
    readonly signIn: SignInStore;
  }
}
