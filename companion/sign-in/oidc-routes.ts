/**
 * Console sign-in with the tenant's own identity provider over OpenID Connect (authorization code
 * flow with PKCE, OpenID Connect Core §3.1; RFC 7636), beside the API-key sign-in that stays for
 * the first owner and for tenants without a provider.
 *
 * - An owner (people:manage) sets the provider: issuer, client id, a client-secret reference
 *   (never the secret), and the email domains whose people sign in there.
 * - GET /account/oidc/start finds the tenant by the email's domain (or ?tenant=), keeps the
 *   request's nonce and PKCE verifier server-side under the digest of its state, gives the
 *   browser the state in a short-lived cookie, and redirects to the provider.
 * - GET /account/oidc/callback needs that cookie to match the state it is given (so nobody can
 *   sign a victim's browser in to their own account with a code of theirs: RFC 6749 §10.12),
 *   takes the stored request once, exchanges the code, and verifies the ID token.
 * - The subject (iss + sub) maps to an active person of that tenant: linked on the first
 *   sign-in by a verified email of one of the provider's domains, by the subject alone after.
 *   Anyone else is refused and no session is made.
 * - The session is the one POST /account/session makes (cookie, CSRF token); the CSRF token
 *   reaches the console in the redirect's fragment, which browsers never send to a server.
 */
import { timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { getCookie, setCookie } from 'hono/cookie';
import { sealAdminChange } from '../account/admin-receipts.ts';
import { hashToken, newSecretToken } from '../account/people.ts';
import { emailDigest, normaliseEmail } from '../account/signup.ts';
import { generateApiKey } from '../core/auth.ts';
import type { AuthenticatedContext } from '../core/auth.ts';
import { rfc3339 } from '../core/clock.ts';
import { ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import { SESSION_COOKIE } from '../core/openapi.ts';
import { secureCookie } from '../core/public-origin.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { secretRefErrors } from '../integrations/secret-ref-check.ts';
import { checkTargetUrl } from '../net/address-policy.ts';
import { AuthorizationResponseRefused, IdentityProviderFailure, createOidcClients } from './oidc-client.ts';
import type { IdentityProviderRecord, LinkedSubject } from './store.ts';

/** The browser's half of a request in flight (RFC 6749 §10.12: state bound to the user agent). */
export const OIDC_STATE_COOKIE = 'svc_oidc_state';
const CALLBACK_PATH = '/account/oidc/callback';
/** How long a person has at the provider before the request is forgotten. */
const LOGIN_TTL_SECONDS = 600;

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

const IdentityProviderRequest = z
  .object({
    issuer: z.string().min(1).max(2048).openapi({ example: 'https://login.example.com' }),
    client_id: z.string().min(1).max(255),
    client_secret_ref: z.string().max(512).nullable().optional().openapi({ description: 'A secret reference (secret://tenants/{tenant_id}/…, env://…, aws-sm://…, vault://…); null or absent for a public client (PKCE only)' }),
    email_domains: z.array(z.string().max(253)).min(1).max(20).openapi({ example: ['example.com'] }),
  })
  .strict()
  .openapi('IdentityProviderRequest');

const IdentityProvider = z
  .object({
    issuer: z.string(),
    client_id: z.string(),
    client_secret_ref: z.string().nullable(),
    email_domains: z.array(z.string()),
    redirect_uri: z.string().openapi({ description: 'Register this redirect URI with the provider' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('IdentityProvider');

const StartQuery = z.object({
  email: z.string().max(254).optional().openapi({ description: "The person's email: its domain names the tenant, and it is passed on as login_hint" }),
  tenant: z.string().max(64).optional().openapi({ description: 'The tenant id, when the email is not given' }),
});

const CallbackParam = z.string().max(4096).optional();
/** What providers send to the redirect URI (Core §3.1.2.5, §3.1.2.6; RFC 9207 iss; session management's session_state). */
const CallbackQuery = z.object({
  code: CallbackParam,
  state: CallbackParam,
  iss: CallbackParam,
  error: CallbackParam,
  error_description: CallbackParam,
  error_uri: CallbackParam,
  session_state: CallbackParam,
  scope: CallbackParam,
  authuser: CallbackParam,
  prompt: CallbackParam,
  hd: CallbackParam,
});

const Redirect = (description: string) => ({ description, headers: z.object({ location: z.string() }) });

type RefusalReason = 'state_mismatch' | 'provider_error' | 'response_not_verified' | 'email_not_verified' | 'person_unknown' | 'person_deactivated';

function refused(reason: RefusalReason, detail: string): ProblemError {
  return new ProblemError({ status: 403, code: 'sign_in_refused', detail, extra: { reason } });
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** What an admin receipt commits of a provider: where people sign in, never the secret's value. */
function providerFacts(p: IdentityProviderRecord): Record<string, string> {
  return { issuer: p.issuer, client_id: p.clientId, client_secret_ref: p.clientSecretRef ?? '', email_domains: p.emailDomains.join(' ') };
}

export function oidcRoutes(deps: RouteDeps) {
  const router = createRouter();
  const { signIn, account, tenants } = deps.store;
  const now = () => rfc3339(deps.clock.now());
  const base = deps.config.publicBaseUrl.replace(/\/$/, '');
  const redirectUri = `${base}${CALLBACK_PATH}`;
  const rules = { allowLoopback: deps.config.webhookAllowLoopback };
  const clients = createOidcClients({ rules, secrets: deps.secrets, now: () => Date.now() });
  deps.lifecycle.onStop(() => clients.close());
  const manage = deps.auth.keyOrSession('people:manage');
  const tags = ['account'];

  const providerBody = (p: IdentityProviderRecord) => ({
    issuer: p.issuer,
    client_id: p.clientId,
    client_secret_ref: p.clientSecretRef,
    email_domains: p.emailDomains,
    redirect_uri: redirectUri,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  });

  const put = defineRoute({
    method: 'put',
    path: '/account/identity-provider',
    operationId: 'updateIdentityProvider',
    tags,
    auth: manage,
    summary: "Set the tenant's OpenID Connect identity provider for console sign-in (people:manage); the client secret only as a reference",
    request: { body: jsonBody(IdentityProviderRequest) },
    responses: {
      200: jsonContent(IdentityProvider, 'The provider as saved'),
      409: problemContent('identity_provider_domain_taken: another tenant signs in people of one of these domains'),
    },
  });
  router.openapi(put, async (c) => {
    const body = c.req.valid('json');
    // A capability-checked credential always names its principal (core/auth.ts).
    const a = c.var.auth as AuthenticatedContext;
    const errors: FieldError[] = [];
    const issuer = checkTargetUrl(body.issuer, rules);
    if (!issuer.ok) errors.push({ in: 'body', path: '/issuer', message: 'expected an https:// URL of a public host (the provider is reached like a webhook target)', code: issuer.code });
    const domains = [...new Set(body.email_domains.map((d) => d.trim().toLowerCase()))];
    body.email_domains.forEach((d, i) => {
      if (!DOMAIN.test(d.trim().toLowerCase())) errors.push({ in: 'body', path: `/email_domains/${i}`, message: 'expected a domain name such as example.com', code: 'invalid_domain' });
    });
    const secretRef = body.client_secret_ref ?? null;
    if (secretRef !== null) errors.push(...secretRefErrors(deps.secrets, a.tenantId, '/client_secret_ref', secretRef));
    if (errors.length > 0) throw ProblemError.validation(errors);
    const at = now();
    const before = await signIn.getIdentityProvider(a.tenantId);
    const row: IdentityProviderRecord = {
      tenantId: a.tenantId,
      // Discovery compares the issuer the document names with this exactly (Discovery 1.0 §4.3).
      issuer: body.issuer,
      clientId: body.client_id,
      clientSecretRef: secretRef,
      emailDomains: domains,
      createdAt: before?.createdAt ?? at,
      updatedAt: at,
    };
    // Who may sign in is an admin change like a person's capabilities: sealed with the actor.
    await sealAdminChange(
      { sealer: deps.sealer },
      a,
      { action: 'identity_provider.set', subjectId: a.tenantId, subjectKind: 'identity_provider', before: null, after: null, related: providerFacts(row) },
      async (tx) => {
        if ((await tx.signIn.putIdentityProvider(row)) === 'domain_taken') {
          throw ProblemError.conflict('identity_provider_domain_taken', 'another tenant already signs in people of one of these email domains');
        }
      },
    );
    return c.json(providerBody((await signIn.getIdentityProvider(a.tenantId))!), 200);
  });

  const get = defineRoute({
    method: 'get',
    path: '/account/identity-provider',
    operationId: 'getIdentityProvider',
    tags,
    auth: manage,
    summary: "The tenant's OpenID Connect identity provider (people:manage)",
    responses: { 200: jsonContent(IdentityProvider, 'The provider'), 404: problemContent('No provider is set') },
  });
  router.openapi(get, async (c) => {
    const p = await signIn.getIdentityProvider(c.var.auth.tenantId);
    if (!p) throw ProblemError.notFound('this tenant has no identity provider');
    return c.json(providerBody(p), 200);
  });

  const remove = defineRoute({
    method: 'delete',
    path: '/account/identity-provider',
    operationId: 'submitIdentityProviderRemoval',
    tags,
    auth: manage,
    summary: 'Remove the identity provider and its linked subjects (people:manage); sessions already open run to their expiry',
    responses: { 200: jsonContent(z.object({ removed: z.literal(true) }).openapi('IdentityProviderRemoval'), 'Removed'), 404: problemContent('No provider is set') },
  });
  router.openapi(remove, async (c) => {
    const a = c.var.auth as AuthenticatedContext;
    const before = await signIn.getIdentityProvider(a.tenantId);
    if (!before) throw ProblemError.notFound('this tenant has no identity provider');
    await sealAdminChange(
      { sealer: deps.sealer },
      a,
      { action: 'identity_provider.removed', subjectId: a.tenantId, subjectKind: 'identity_provider', before: null, after: null, related: providerFacts(before) },
      async (tx) => {
        if (!(await tx.signIn.deleteIdentityProvider(a.tenantId))) throw ProblemError.notFound('this tenant has no identity provider');
      },
    );
    return c.json({ removed: true as const }, 200);
  });

  const start = defineRoute({
    method: 'get',
    path: '/account/oidc/start',
    operationId: 'getOidcSignIn',
    tags,
    auth: 'public',
    summary: "Start console sign-in with the tenant's identity provider: a redirect to its authorization endpoint",
    request: { query: StartQuery },
    responses: {
      302: Redirect('To the provider; Set-Cookie carries the state for the callback'),
      404: problemContent('No identity provider serves this email domain or tenant'),
      503: problemContent('identity_provider_unavailable: the provider could not be discovered or its client secret resolved'),
    },
  });
  router.openapi(start, async (c) => {
    const q = c.req.valid('query');
    let tenantId = q.tenant;
    const email = q.email === undefined ? undefined : normaliseEmail(q.email);
    if (tenantId === undefined && email !== undefined) {
      const domain = email.slice(email.lastIndexOf('@') + 1);
      tenantId = email.includes('@') ? await signIn.tenantForDomain(domain) : undefined;
    }
    const provider = tenantId === undefined ? undefined : await signIn.getIdentityProvider(tenantId);
    if (!provider) throw ProblemError.notFound('no identity provider signs in this email domain or tenant');
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    let url: URL;
    try {
      url = await clients.authorizationUrl(provider, {
        redirectUri,
        state,
        nonce,
        codeChallenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        ...(email !== undefined ? { loginHint: email } : {}),
      });
    } catch (err) {
      if (!(err instanceof IdentityProviderFailure)) throw err;
      deps.log.warn('identity provider unavailable', { tenant_id: provider.tenantId, reason: err.message });
      throw new ProblemError({ status: 503, code: 'identity_provider_unavailable', detail: 'the identity provider could not be reached or is not configured correctly; try again later' });
    }
    const at = deps.clock.now();
    await signIn.purgeExpired(rfc3339(at));
    await signIn.createLogin({
      stateHash: hashToken(state),
      tenantId: provider.tenantId,
      nonce,
      codeVerifier,
      createdAt: rfc3339(at),
      expiresAt: rfc3339(new Date(at.getTime() + LOGIN_TTL_SECONDS * 1000)),
    });
    // SameSite=Lax: the provider's redirect back is a cross-site top-level GET, which Strict
    // cookies do not accompany (RFC 6265bis §5.6.7.1); the cookie is read only at the callback.
    setCookie(c, OIDC_STATE_COOKIE, state, { path: CALLBACK_PATH, httpOnly: true, sameSite: 'Lax', secure: secureCookie(deps.config, c), maxAge: LOGIN_TTL_SECONDS });
    c.header('cache-control', 'no-store');
    return c.redirect(url.href, 302) as never;
  });

  const callback = defineRoute({
    method: 'get',
    path: CALLBACK_PATH,
    operationId: 'getOidcCallback',
    tags,
    auth: 'public',
    summary: "The provider's redirect back: verifies state, nonce, PKCE and the ID token, maps the subject to an active person and opens the account session",
    request: { query: CallbackQuery },
    responses: {
      302: Redirect('Signed in: Set-Cookie carries the session; the console receives the CSRF token in the fragment'),
      403: problemContent('sign_in_refused: `reason` is state_mismatch, provider_error, response_not_verified, email_not_verified, person_unknown or person_deactivated; no session is made'),
      503: problemContent('identity_provider_unavailable'),
    },
  });
  router.openapi(callback, async (c) => {
    const q = c.req.valid('query');
    const cookieState = getCookie(c, OIDC_STATE_COOKIE);
    // The state cookie has done its work whatever happens next.
    setCookie(c, OIDC_STATE_COOKIE, '', { path: CALLBACK_PATH, httpOnly: true, sameSite: 'Lax', secure: secureCookie(deps.config, c), maxAge: 0 });
    c.header('cache-control', 'no-store');
    if (q.state === undefined || cookieState === undefined || cookieState.length > 256 || !sameText(q.state, cookieState)) {
      throw refused('state_mismatch', 'this answer does not belong to a sign-in started in this browser; start again');
    }
    const login = await signIn.takeLogin(hashToken(q.state), now());
    if (!login) throw refused('state_mismatch', 'this sign-in has expired or was already used; start again');
    if (q.error !== undefined) throw refused('provider_error', 'the identity provider did not sign you in');
    const provider = await signIn.getIdentityProvider(login.tenantId);
    if (!provider) throw refused('provider_error', 'this tenant no longer signs in with an identity provider');
    // The URL as the provider redirected to it, built from the public origin, never from Host.
    const current = new URL(redirectUri);
    current.search = new URL(c.req.url).search;
    let identity;
    try {
      identity = await clients.exchange(provider, current, { state: q.state, nonce: login.nonce, codeVerifier: login.codeVerifier });
    } catch (err) {
      if (err instanceof AuthorizationResponseRefused) {
        deps.log.warn('oidc sign-in refused', { tenant_id: provider.tenantId, reason: err.message });
        throw refused('response_not_verified', 'the identity provider\'s answer did not verify');
      }
      if (err instanceof IdentityProviderFailure) {
        deps.log.warn('identity provider unavailable', { tenant_id: provider.tenantId, reason: err.message });
        throw new ProblemError({ status: 503, code: 'identity_provider_unavailable', detail: 'the identity provider could not be reached; try again later' });
      }
      throw err;
    }
    const link = await personFor(provider, identity);
    const person = await account.getPrincipal(provider.tenantId, link.personId);
    if (!person || person.kind !== 'person') throw refused('person_unknown', 'no person of this tenant has this identity');
    if (person.status !== 'active') throw refused('person_deactivated', 'this person has been deactivated in this tenant');
    const session = newSecretToken();
    const csrf = newSecretToken();
    const ttl = deps.config.sessionTtlSeconds;
    const createdAt = deps.clock.now();
    await account.createSession({
      id: deps.ids.next('ses'),
      tokenHash: session.hash,
      csrfHash: csrf.hash,
      tenantId: provider.tenantId,
      personId: person.id,
      keyId: link.sessionKeyId,
      createdAt: rfc3339(createdAt),
      expiresAt: rfc3339(new Date(createdAt.getTime() + ttl * 1000)),
    });
    setCookie(c, SESSION_COOKIE, session.token, { path: '/', httpOnly: true, sameSite: 'Strict', secure: secureCookie(deps.config, c), maxAge: ttl });
    return c.redirect(`${base}/console#/signed-in?csrf_token=${csrf.token}`, 302) as never;
  });

  /**
   * The person behind a verified identity: by the linked subject, else (first sign-in) by a
   * verified email of one of the provider's domains, which links the subject. OpenID Connect
   * Core §5.7: only iss + sub are stable; an email is trusted once, and only when verified.
   */
  async function personFor(provider: IdentityProviderRecord, identity: { issuer: string; subject: string; email: string | undefined; emailVerified: boolean }): Promise<LinkedSubject> {
    const linked = await signIn.linkedPerson(provider.tenantId, identity.issuer, identity.subject);
    if (linked) return linked;
    if (identity.email === undefined || !identity.emailVerified) throw refused('email_not_verified', 'the identity provider did not assert a verified email for this identity');
    const email = normaliseEmail(identity.email);
    if (!provider.emailDomains.includes(email.slice(email.lastIndexOf('@') + 1))) throw refused('person_unknown', 'this email is not of a domain this tenant signs in');
    const personId = await signIn.personByEmailDigest(provider.tenantId, emailDigest(email));
    if (personId === undefined) throw refused('person_unknown', 'no person of this tenant has this email; ask an owner to add you');
    const tenant = (await tenants.getTenant(provider.tenantId))!;
    const anchor = generateApiKey(tenant.kind);
    const keyId = deps.ids.next('key');
    const at = now();
    await deps.store.transaction(async (tx) => {
      await tx.account.addKey({
        id: keyId,
        tenantId: tenant.id,
        keyHash: anchor.hash,
        prefix: anchor.prefix,
        lastFour: anchor.lastFour,
        createdAt: at,
        personId,
        label: 'OpenID Connect sign-in (holds no secret; anchors sessions)',
        capabilities: null,
      });
      // Its secret is dropped here, and it is revoked before it could ever be presented.
      await tx.account.revokeKey(tenant.id, keyId, at);
      await tx.signIn.linkSubject(tenant.id, identity.issuer, identity.subject, { personId, sessionKeyId: keyId }, at);
    });
    // Two first sign-ins at once: whichever link was written is the one.
    return (await signIn.linkedPerson(provider.tenantId, identity.issuer, identity.subject))!;
  }

  return router;
}
