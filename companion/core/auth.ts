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

/** Who is calling, from the credential alone. */
export interface AuthContext {
  tenantId: string;
  tenantKind: TenantKind;
  /** The key, or for an account session the person acting (their id), as the actor of writes. */
  keyId: string;
  /** Set when the caller is a signed-in person (an account session), not a key. */
  personId?: string;
}

export type AuthEnv = { Variables: { auth: AuthContext } };

/** What the key store returns for a hash; implemented by the account capability's store. */
export interface ApiKeyMatch {
  keyId: string;
  tenantId: string;
  tenantKind: TenantKind;
  keyHash: Uint8Array;
}

export interface ApiKeyLookup {
  /** The active key with this SHA-256, or undefined (unknown and revoked look the same). */
  findActiveApiKeyByHash(keyHash: Uint8Array): Promise<ApiKeyMatch | undefined>;
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
 * Resolves a presented key to its tenant. Lookup is by the key's SHA-256 (an index probe);
 * the stored hash is then compared in constant time so the final check never short-circuits.
 * The probe's timing can only depend on the digest, which a caller cannot steer toward a
 * stored one without knowing the key. Whether a key exists, was revoked or never was
 * answers the same 401.
 */
export async function authenticateApiKey(lookup: ApiKeyLookup, key: string): Promise<AuthContext> {
  // The format is public, so rejecting malformed keys before any lookup leaks nothing.
  if (!isWellFormedApiKey(key)) throw unauthorized('invalid_token');
  const hash = hashApiKey(key);
  const match = await lookup.findActiveApiKeyByHash(hash);
  if (!match || match.keyHash.length !== hash.length || !timingSafeEqual(match.keyHash, hash)) {
    throw unauthorized('invalid_token');
  }
  // A key's prefix names the tenant kind it was minted for; after an upgrade the old
  // svc_test_ key must not act for the production tenant (DESIGN.md §3: no mixing of keys).
  if (!key.startsWith(API_KEY_PREFIX[match.tenantKind])) throw unauthorized('invalid_token');
  return { tenantId: match.tenantId, tenantKind: match.tenantKind, keyId: match.keyId };
}

/** The API key requirement for `defineRoute({ auth })`; sets `c.var.auth`. */
export function createApiKeyAuth(lookup: ApiKeyLookup): AuthRequirement<AuthEnv> {
  const middleware: MiddlewareHandler<AuthEnv> = async function requireApiKey(c, next) {
    const key = presentedKey(c.req.raw.headers);
    if (key === undefined) throw unauthorized();
    c.set('auth', await authenticateApiKey(lookup, key));
    await next();
  };
  return { security: API_KEY_SECURITY, middleware };
}

export type OptionalAuthEnv = { Variables: { auth: AuthContext | undefined } };

/**
 * interface-spec Authentication 5: a route open to anyone where a key is optional (verification:
 * only a call authenticated with a tenant key can raise verify.failed). A key that is sent must
 * be valid (401 otherwise), so a typo never silently downgrades to anonymous.
 */
export function createOptionalApiKeyAuth(lookup: ApiKeyLookup): AuthRequirement<OptionalAuthEnv> {
  const middleware: MiddlewareHandler<OptionalAuthEnv> = async function optionalApiKey(c, next) {
    const key = presentedKey(c.req.raw.headers);
    c.set('auth', key === undefined ? undefined : await authenticateApiKey(lookup, key));
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
