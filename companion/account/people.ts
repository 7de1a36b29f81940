/**
 * People, capabilities and account sessions (interface-spec Authentication 2, Account table;
 * DESIGN.md §6).
 *
 * A session is obtained with an API key (POST /account/session) and carried in the `svc_session`
 * cookie. Its token and its CSRF token are 32 random bytes each; only their SHA-256 digests
 * are stored (a fast hash suffices for 256-bit random secrets, as for API keys in core/auth.ts).
 * The person and capabilities are read again on every request, so a change applies at once.
 * A session belongs to the person, not to the key it was opened with: the upgrade to production
 * revokes the svc_test_ keys, and the person who completed it stays signed in.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { API_KEY_SECURITY, CAPABILITIES, authenticateApiKey, effectiveCapabilities, presentedKey, requireCapability, unauthorized } from '../core/auth.ts';
import type { ApiKeyLookup, AuthEnv, Capability, KeyAuthOptions, Principal, TenantKind } from '../core/auth.ts';
import { ProblemError } from '../core/errors.ts';
import { SESSION_COOKIE } from '../core/openapi.ts';
import type { AuthRequirement } from '../core/router.ts';
import type { AccountStore, PersonRecord } from './store.ts';

/**
 * Every capability a principal can hold (core/auth.ts). The tenant's owner holds them all,
 * including any added after the owner was created; anyone else holds what was granted.
 * billing:manage, account:rename, account:retention and people:manage act on the account;
 * reviews:decide, reviews:delegate (naming a reviewer other than oneself), policy:manage,
 * integrations:manage and exports:read on the tenant API, as do gate:submit (POST /v1/gate and
 * /{vertical}/proposed-action), records:write (POST /v1/record, /v1/record/batch) and
 * records:read (the tenant's records, proofs, board and history), which every new person and
 * service account holds by default. Each route declares the one it needs
 * (x-required-capability in the OpenAPI description).
 */
export { CAPABILITIES, requireCapability };
export type { Capability };

/** A person's capabilities as granted (an owner: all), without any key's subset. */
export function capabilitiesOf(person: PersonRecord | null): Capability[] {
  if (!person) return [];
  return effectiveCapabilities(person.role, person.capabilities, null);
}

export const CSRF_HEADER = 'x-csrf-token';

export interface SessionContext {
  sessionId: string;
  tenantId: string;
  tenantKind: TenantKind;
  /** The session's person; null for a session opened with a service account's key. */
  person: PersonRecord | null;
  /** Who acts: the person, or the service account of the key the session was opened with. */
  principal: Principal;
  /** What the principal may do, within the subset of the key the session was opened with. */
  capabilities: Capability[];
}

export type SessionEnv = { Variables: { session: SessionContext } };

export function newSecretToken(): { token: string; hash: Uint8Array } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(token, 'utf8').digest());
}

function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** RFC 9110 §9.2.1: only these methods are safe; every other one changes state. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The ServiceAccountSession requirement for `defineRoute({ auth })`; sets `c.var.session`.
 *
 * CSRF: a synchronizer token (OWASP CSRF Prevention Cheat Sheet). SameSite=Strict (RFC 6265bis
 * §8.8) already keeps other sites' requests from carrying the cookie, but it treats every
 * subdomain of the registrable domain as the same site, and older browsers ignore it. So each
 * session also gets a random CSRF token, returned once in the body of POST /account/session
 * (never in a cookie, so a page on another origin cannot read it), and every state-changing
 * request must echo it in X-CSRF-Token. A header a cross-site form cannot set, compared as
 * SHA-256 digests in constant time, closes both gaps without a second cookie.
 */
export function createSessionAuth(store: AccountStore, now: () => string): AuthRequirement<SessionEnv> {
  const middleware: MiddlewareHandler<SessionEnv> = async function requireSession(c, next) {
    c.set('session', await resolveSession(store, now(), c));
    await next();
  };
  return { security: [{ ServiceAccountSession: [] }], middleware };
}

async function resolveSession(store: AccountStore, now: string, c: Context): Promise<SessionContext> {
  const token = getCookie(c, SESSION_COOKIE);
  if (token === undefined || token.length > 128) throw sessionRequired();
  const hash = hashToken(token);
  const match = await store.findLiveSession(hash, now);
  if (!match || !sameDigest(match.tokenHash, hash)) throw sessionRequired();
  if (!SAFE_METHODS.has(c.req.method)) {
    const csrf = c.req.header(CSRF_HEADER);
    if (csrf === undefined || csrf.length > 128 || !sameDigest(hashToken(csrf), match.csrfHash)) {
      throw new ProblemError({ status: 403, code: 'csrf_token_invalid', detail: `a cookie-authenticated write needs the session's CSRF token in ${CSRF_HEADER}` });
    }
  }
  // Read fresh on every request: a deactivated person or service account is refused at once.
  const found = await store.sessionPrincipal(match.sessionId);
  if (!found || found.status !== 'active') throw sessionRequired();
  const principal: Principal = { id: found.id, kind: found.kind, displayName: found.displayName, capabilities: found.capabilities };
  return {
    sessionId: match.sessionId,
    tenantId: match.tenantId,
    tenantKind: match.tenantKind,
    person: match.person,
    principal,
    capabilities: principal.capabilities,
  };
}

/**
 * The tenant API routes the console uses: an API key as everywhere (interface-spec
 * Authentication 1), or, when no key is sent, the account session cookie with its CSRF token on
 * writes (Authentication 2). The tenant still comes from the credential only. Either way the
 * credential's principal must hold `capability` (within the key's subset): a key can do at most
 * what its principal may, exactly as that principal's session. The actor recorded for a
 * session's writes (policy receipts) is the person, so a console change names who made it.
 */
export function createKeyOrSessionAuth(lookup: ApiKeyLookup, store: AccountStore, options: KeyAuthOptions) {
  return (capability: Capability): AuthRequirement<AuthEnv> => {
    const middleware: MiddlewareHandler<AuthEnv> = async function requireKeyOrSession(c, next) {
      const key = presentedKey(c.req.raw.headers);
      if (key !== undefined || getCookie(c, SESSION_COOKIE) === undefined) {
        // No credential at all answers as the key-only routes do (401 with a Bearer challenge).
        if (key === undefined) throw unauthorized();
        const auth = await authenticateApiKey(lookup, key, options.now().toISOString());
        requireCapability(auth.principal, capability);
        c.set('auth', auth);
        await next();
        if (options.used && c.res.status < 400) await options.used(auth.keyId);
        return;
      }
      const session = await resolveSession(store, options.now().toISOString(), c);
      requireCapability(session, capability);
      const personId = session.person?.id;
      c.set('auth', {
        tenantId: session.tenantId,
        tenantKind: session.tenantKind,
        keyId: personId ?? session.sessionId,
        ...(personId ? { personId } : {}),
        principal: session.principal,
        credentialId: session.sessionId,
      });
      await next();
    };
    return { security: [...API_KEY_SECURITY, { ServiceAccountSession: [] }], middleware, capability };
  };
}

function sessionRequired(): ProblemError {
  return new ProblemError({ status: 401, code: 'unauthorized', detail: 'sign in with POST /account/session: the session is missing, expired or ended' });
}
