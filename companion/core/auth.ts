/**
 * API key authentication (interface-spec Authentication 1 and 6).
 *
 * Keys are `svc_test_` (sandbox) or `svc_live_` (production) followed by 43 base62
 * characters encoding 32 random bytes. The service stores only SHA-256(key): a fast,
 * unsalted hash is sound here because the key itself carries 256 bits of entropy, so there
 * is no dictionary to precompute and nothing for a slow KDF to stretch (unlike passwords).
 *
 * The tenant comes only from the credential: the middleware sets `c.var.auth` and nothing
 * a client sends in a path, query or body can choose another tenant.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { ProblemError } from './errors.ts';
import type { AuthRequirement, SecurityRequirement } from './router.ts';

export type TenantKind = 'sandbox' | 'production';

export const API_KEY_PREFIX = { sandbox: 'svc_test_', production: 'svc_live_' } as const satisfies Record<TenantKind, string>;
export type ApiKeyPrefix = (typeof API_KEY_PREFIX)[TenantKind];

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^43 > 2^256, so 43 characters hold any 32-byte value. */
const KEY_BODY_LENGTH = 43;
const API_KEY_PATTERN = /^svc_(test|live)_[0-9A-Za-z]{43}$/;

/**
 * Every capability a principal can hold (account/people.ts documents each). A tenant's owner
 * holds them all, including any added after the owner was created; other people and service
 * accounts hold what was granted, and a key may narrow that further (its own subset).
 */
export const CAPABILITIES = [
  'billing:manage',
  'account:rename',
  'account:retention',
  'people:manage',
  'reviews:decide',
  'policy:manage',
  'integrations:manage',
  'exports:read',
  'gate:submit',
  'records:write',
  'records:read',
  'reviews:delegate',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * Granted to every new person and service account, so the gate, the record endpoints and reads
 * of the tenant's own records keep working for everyone as they did before keys checked
 * capabilities; an admin may take them away afterwards.
 */
export const DEFAULT_CAPABILITIES: readonly Capability[] = ['gate:submit', 'records:write', 'records:read'];

const KNOWN_CAPABILITIES = new Set<string>(CAPABILITIES);

export function isCapability(name: string): name is Capability {
  return KNOWN_CAPABILITIES.has(name);
}

/**
 * What a principal may do through one credential: an owner everything, anyone else what was
 * granted (names this version does not know are ignored), intersected with the key's own subset
 * when it has one (null: the principal's). Always in CAPABILITIES order.
 */
export function effectiveCapabilities(role: 'owner' | 'member' | null, granted: readonly string[], keySubset: readonly string[] | null): Capability[] {
  const held = role === 'owner' ? new Set<string>(CAPABILITIES) : new Set(granted);
  const subset = keySubset === null ? null : new Set(keySubset);
  return CAPABILITIES.filter((c) => held.has(c) && (subset === null || subset.has(c)));
}

export type PrincipalKind = 'person' | 'service_account';

/** Who a credential acts for: a person (per_…) or a service account (sva_…). */
export interface Principal {
  id: string;
  kind: PrincipalKind;
  /** A person's display name (or, lacking one, their email or id); a service account's name. */
  displayName: string;
  /** What this credential may do: the principal's capabilities within the key's subset. */
  capabilities: Capability[];
}

/** Who is calling, from the credential alone. */
export interface AuthContext {
  tenantId: string;
  tenantKind: TenantKind;
  /** The key, or for an account session the person acting (their id), as the actor of writes. */
  keyId: string;
  /** Set when the caller is a signed-in person (an account session), not a key. */
  personId?: string;
  /**
   * The principal behind the credential, for keys and sessions alike: every credential
   * middleware sets it. Absent only where the service acts on its own (review expiry, signed
   * callbacks), which no credential authenticated.
   */
  principal?: Principal;
  /** The key (key_…) or session (ses_…) presented; absent exactly when principal is. */
  credentialId?: string;
}

/** What the credential middlewares set: the principal always present. */
export type AuthenticatedContext = AuthContext & { principal: Principal; credentialId: string };

export type AuthEnv = { Variables: { auth: AuthContext } };

/** What the key store returns for a hash; implemented by the account capability's store. */
export interface ApiKeyMatch {
  keyId: string;
  tenantId: string;
  tenantKind: TenantKind;
  keyHash: Uint8Array;
}

/** An active key with its principal, as authentication needs it on every request. */
export interface ResolvedApiKey extends ApiKeyMatch {
  /** undefined when the key's principal row is missing (refused like an unknown key). */
  principal: (Principal & { status: 'active' | 'deactivated' }) | undefined;
  /** RFC 3339 UTC; null for a key without expiry. */
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export interface ApiKeyLookup {
  /** The active key with this SHA-256, or undefined (unknown and revoked look the same). */
  findActiveApiKeyByHash(keyHash: Uint8Array): Promise<ApiKeyMatch | undefined>;
  /** The same key with its principal and the principal's capabilities within the key's subset. */
  resolveApiKey(keyHash: Uint8Array): Promise<ResolvedApiKey | undefined>;
  /** Records a key's last use (advisory: listings show it). */
  touchApiKey(keyId: string, at: string): Promise<void>;
}

/** A key lookup that also reads the credential version (migrations/0007, 0016), for cachedKeyLookup. */
export interface VersionedKeyLookup extends ApiKeyLookup {
  /** The counter every change to a key, tenant kind, person or service account bumps (triggers). */
  credentialVersion(): Promise<number>;
}

/** A key lookup that resolves the presented key itself (cachedKeyLookup), for authenticatePresentedKey. */
export interface PresentedKeyLookup extends ApiKeyLookup {
  /**
   * The key's entry if the presented key is one: its SHA-256 already compared in constant time
   * with the stored hash when the entry was found (authenticateApiKey's check).
   */
  resolvePresentedKey(key: string): Promise<ResolvedApiKey | undefined>;
}

/**
 * Resolved keys kept in memory while the credential version is unchanged, by the presented key
 * itself, so a request with a known key costs neither a query nor a SHA-256 of the key.
 *
 * The version is read once for a batch of requests rather than per request: the read starts at
 * the end of the event loop's turn (setImmediate) in which the first request waiting for it
 * arrived, or once the read under way has answered, so every request of that turn shares it and
 * none is answered from a read that started before it arrived (which may predate a revocation it
 * must see). A change committed anywhere, by this process or another on the same database, is
 * seen by every request that arrives after it. A changed version forgets every cached key. Only
 * found keys are kept, so unknown keys cannot fill the cache.
 *
 * Keying the map by the secret itself: the map compares a presented key with a stored one only
 * after their (randomly seeded) string hashes matched, so its timing says nothing a caller can
 * steer toward a stored key; a key not in the map is checked as authenticateApiKey checks it.
 */
export function cachedKeyLookup(lookup: VersionedKeyLookup, limit = 10_000): PresentedKeyLookup {
  const keys = new Map<string, ResolvedApiKey>();
  let version: number | undefined;
  /** The read under way, if any. */
  let reading: Promise<void> | undefined;
  /** The read the requests of this turn wait for, not yet started. */
  let next: Promise<void> | undefined;
  const read = (): Promise<void> => {
    const done = lookup.credentialVersion().then((v) => {
      if (v !== version) {
        keys.clear();
        version = v;
      }
    });
    reading = done;
    const clear = () => {
      if (reading === done) reading = undefined;
    };
    done.then(clear, clear);
    return done;
  };
  const settledReading = () => reading?.then(
    () => undefined,
    () => undefined,
  );
  const current = (): Promise<void> => {
    next ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(settledReading)
      .then(() => {
        next = undefined;
        return read();
      });
    return next;
  };
  return {
    findActiveApiKeyByHash: (hash) => lookup.findActiveApiKeyByHash(hash),
    touchApiKey: (keyId, at) => lookup.touchApiKey(keyId, at),
    // Not cached: only a presented key is (resolvePresentedKey), so no version read is needed.
    resolveApiKey: (hash) => lookup.resolveApiKey(hash),
    async resolvePresentedKey(key) {
      // The format is public, so a malformed key is refused before any read, as authenticateApiKey does.
      if (!isWellFormedApiKey(key)) return undefined;
      await current();
      const cached = keys.get(key);
      if (cached) return cached;
      const seen = version;
      const hash = hashApiKey(key);
      const match = await lookup.resolveApiKey(hash);
      if (!match || match.keyHash.length !== hash.length || !timingSafeEqual(match.keyHash, hash)) return undefined;
      // Kept only if no newer version was read meanwhile: the row may predate that change.
      if (version === seen) {
        if (keys.size >= limit) keys.clear();
        keys.set(key, match);
      }
      return match;
    },
  };
}

export interface NewApiKey {
  /** The secret, shown to the caller once and never stored. */
  key: string;
  hash: Uint8Array;
  prefix: ApiKeyPrefix;
  lastFour: string;
}

export function generateApiKey(kind: TenantKind): NewApiKey {
  const prefix = API_KEY_PREFIX[kind];
  const key = prefix + base62(randomBytes(32));
  // The last four characters are shown in listings so people can tell keys apart; the other
  // 39 still carry more than 230 bits.
  return { key, hash: hashApiKey(key), prefix, lastFour: key.slice(-4) };
}

export function hashApiKey(key: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(key, 'utf8').digest());
}

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

function base62(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out.padStart(KEY_BODY_LENGTH, '0');
}

/** interface-spec Authentication 1: either scheme suffices (OpenAPI: alternatives in one list). */
export const API_KEY_SECURITY: SecurityRequirement[] = [{ BearerAuth: [] }, { ServiceKey: [] }];

/** The credential a request presents, or why it presents none usable. */
export function presentedKey(headers: { get(name: string): string | null | undefined }): string | undefined {
  const serviceKey = headers.get('x-service-key')?.trim() || undefined;
  const authorization = headers.get('authorization')?.trim();
  // RFC 9110 §11.1: the auth scheme is case-insensitive; RFC 6750 §2.1: "Bearer" SP token.
  const bearer = authorization ? /^bearer +(\S+)$/i.exec(authorization)?.[1] : undefined;
  // An Authorization header that is not "Bearer <key>" is refused even beside a valid
  // X-Service-Key, as two different keys are: the caller meant some credential we cannot read.
  if (authorization && bearer === undefined) throw unauthorized('invalid_request', 'the Authorization header is not "Bearer <key>"');
  if (serviceKey !== undefined && bearer !== undefined && serviceKey !== bearer) {
    // Two different credentials: refuse rather than guess which tenant is meant.
    throw unauthorized('invalid_request', 'X-Service-Key and Authorization carry different credentials');
  }
  return serviceKey ?? bearer;
}

/**
 * Resolves a presented key to its tenant and principal. Lookup is by the key's SHA-256 (an index
 * probe); the stored hash is then compared in constant time so the final check never
 * short-circuits. The probe's timing can only depend on the digest, which a caller cannot steer
 * toward a stored one without knowing the key. Whether a key exists, was revoked, expired, or
 * belongs to a deactivated principal answers the same 401.
 */
export async function authenticateApiKey(lookup: ApiKeyLookup, key: string, now: string): Promise<AuthenticatedContext> {
  // The format is public, so rejecting malformed keys before any lookup leaks nothing.
  if (!isWellFormedApiKey(key)) throw unauthorized('invalid_token');
  const hash = hashApiKey(key);
  const match = await lookup.resolveApiKey(hash);
  if (!match || match.keyHash.length !== hash.length || !timingSafeEqual(match.keyHash, hash)) {
    throw unauthorized('invalid_token');
  }
  checkResolved(match, key, now);
  return contextOf(match);
}

/**
 * The context made for each cached key entry (cachedKeyLookup keeps an entry, unchanged, while
 * the credential version is): the checks run on every request, the context is made once. A new
 * entry (another version read) gets a new context. Nothing writes to a context once made.
 */
const CONTEXTS = new WeakMap<ResolvedApiKey, AuthenticatedContext>();

/** authenticateApiKey through a lookup that resolves the presented key itself (cachedKeyLookup). */
export async function authenticatePresentedKey(lookup: PresentedKeyLookup, key: string, now: string): Promise<AuthenticatedContext> {
  const match = await lookup.resolvePresentedKey(key);
  if (!match) throw unauthorized('invalid_token');
  checkResolved(match, key, now);
  let context = CONTEXTS.get(match);
  if (context === undefined) CONTEXTS.set(match, (context = contextOf(match)));
  return context;
}

/** The checks after the key's hash matched a stored one: prefix, expiry, principal. */
function checkResolved(match: ResolvedApiKey, key: string, now: string): asserts match is ResolvedApiKey & { principal: NonNullable<ResolvedApiKey['principal']> } {
  // A key's prefix names the tenant kind it was minted for; after an upgrade the old
  // svc_test_ key must not act for the production tenant (DESIGN.md §3: no mixing of keys).
  if (!key.startsWith(API_KEY_PREFIX[match.tenantKind])) throw unauthorized('invalid_token');
  // RFC 3339 UTC timestamps with fixed-width milliseconds compare correctly as text.
  if (match.expiresAt !== null && match.expiresAt <= now) throw unauthorized('invalid_token');
  const principal = match.principal;
  if (!principal || principal.status !== 'active') throw unauthorized('invalid_token');
}

/** The request's context of a key that passed checkResolved. */
function contextOf(match: ResolvedApiKey & { principal: NonNullable<ResolvedApiKey['principal']> }): AuthenticatedContext {
  const { principal } = match;
  return {
    tenantId: match.tenantId,
    tenantKind: match.tenantKind,
    keyId: match.keyId,
    principal: { id: principal.id, kind: principal.kind, displayName: principal.displayName, capabilities: principal.capabilities },
    credentialId: match.keyId,
  };
}

/**
 * A key's last use is written at most once per this interval per process: listings show it to
 * the minute they need, and a write on every request would cost every request a write.
 */
const LAST_USE_RESOLUTION_MS = 15 * 60_000;

/**
 * Records a successful request's key use, throttled (see LAST_USE_RESOLUTION_MS). A use within
 * the interval of the last one written returns undefined at once: nothing to wait for, so the
 * request's answer waits on no promise (most requests).
 */
export function lastUseRecorder(lookup: ApiKeyLookup, clock: () => Date): (keyId: string) => Promise<void> | undefined {
  const written = new Map<string, number>();
  return (keyId) => {
    const at = clock();
    const last = written.get(keyId);
    if (last !== undefined && at.getTime() - last < LAST_USE_RESOLUTION_MS) return undefined;
    if (written.size >= 10_000) written.clear();
    written.set(keyId, at.getTime());
    return touch(keyId, at);
  };
  async function touch(keyId: string, at: Date): Promise<void> {
    try {
      await lookup.touchApiKey(keyId, at.toISOString());
    } catch {
      // Advisory only: the request it records already succeeded, and must answer as it did.
      written.delete(keyId);
    }
  }
}

/** 403 naming the missing capability (problem+json `capability` member, RFC 9457 §3.2). */
export function requireCapability(holder: { capabilities: readonly string[] }, capability: Capability): void {
  if (!holder.capabilities.includes(capability)) {
    throw new ProblemError({
      status: 403,
      code: 'capability_missing',
      detail: `the principal behind this credential lacks the ${capability} capability`,
      extra: { capability },
    });
  }
}

export interface KeyAuthOptions {
  now: () => Date;
  /** Called after a request the key authenticated has answered below 400; undefined when there is nothing to wait for. */
  used?: (keyId: string) => Promise<void> | undefined;
}

/**
 * The API key requirement for `defineRoute({ auth })`; sets `c.var.auth`. With a capability,
 * the key's principal must hold it within the key's subset (403 capability_missing otherwise);
 * the OpenAPI operation names it as x-required-capability.
 */
export function createApiKeyAuth(lookup: ApiKeyLookup, options: KeyAuthOptions, capability?: Capability): AuthRequirement<AuthEnv> {
  const middleware: MiddlewareHandler<AuthEnv> = async function requireApiKey(c, next) {
    const key = presentedKey(c.req.raw.headers);
    if (key === undefined) throw unauthorized();
    const auth = await authenticateApiKey(lookup, key, options.now().toISOString());
    if (capability) requireCapability(auth.principal, capability);
    c.set('auth', auth);
    await next();
    if (options.used && c.res.status < 400) await options.used(auth.keyId);
  };
  return { security: API_KEY_SECURITY, middleware, ...(capability ? { capability } : {}) };
}

export type OptionalAuthEnv = { Variables: { auth: AuthContext | undefined } };

/**
 * interface-spec Authentication 5: a route open to anyone where a key is optional (verification:
 * only a call authenticated with a tenant key can raise verify.failed). A key that is sent must
 * be valid (401 otherwise), so a typo never silently downgrades to anonymous.
 */
export function createOptionalApiKeyAuth(lookup: ApiKeyLookup, options: KeyAuthOptions): AuthRequirement<OptionalAuthEnv> {
  const middleware: MiddlewareHandler<OptionalAuthEnv> = async function optionalApiKey(c, next) {
    const key = presentedKey(c.req.raw.headers);
    c.set('auth', key === undefined ? undefined : await authenticateApiKey(lookup, key, options.now().toISOString()));
    await next();
  };
  return { security: [{}, ...API_KEY_SECURITY], middleware };
}

/**
 * 401 with a Bearer challenge (RFC 6750 §3; RFC 9110 §11.6.1). No error code when no
 * credential came at all (RFC 6750 §3.1); one message for every bad key.
 */
export function unauthorized(error?: 'invalid_token' | 'invalid_request', detail?: string): ProblemError {
  const challenge = `Bearer realm="svc"${error ? `, error="${error}"` : ''}`;
  return new ProblemError({
    status: 401,
    code: 'unauthorized',
    detail: detail ?? (error ? 'the credential is not valid' : 'send an API key as X-Service-Key or Authorization: Bearer'),
    headers: { 'www-authenticate': challenge },
  });
}
