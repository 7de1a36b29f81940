/**
 * Console sign-in with the tenant's identity provider over OpenID Connect (authorization code +
 * PKCE), over real HTTP on loopback: `oidc-provider` is the provider, the companion the relying
 * party. The subject maps to a person by verified email on the first sign-in and by subject
 * after; a deactivated or unknown person, a state from another browser and a wrong nonce are
 * refused and make no session; the session works on /account/me with the person's capabilities.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { signIn } from './account-helpers.ts';
import type { Session } from './account-helpers.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

const CLIENT_ID = 'action-gate';
const CLIENT_SECRET = 'a-client-secret-of-the-test-provider';
const SECRET_REF = 'secret://oidc/gate-client';

interface Account {
  email: string;
  email_verified: boolean;
}

/** Who the provider signs in next (its login step is answered by the test, not a form). */
let nextAccount = 'sub-ada';
const accounts: Record<string, Account> = {
  'sub-ada': { email: 'ada@example.com', email_verified: true },
  'sub-ada-other': { email: 'Ada@Example.com', email_verified: true },
  'sub-unverified': { email: 'grace@example.com', email_verified: false },
  'sub-stranger': { email: 'stranger@example.com', email_verified: true },
  'sub-carol': { email: 'carol@other.example', email_verified: true },
};

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

let idp: http.Server;
let issuer: string;
let companionPort: number;

beforeAll(async () => {
  companionPort = await freePort();
  idp = http.createServer();
  await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`http://127.0.0.1:${companionPort}/account/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: async (_ctx: unknown, sub: string) => (accounts[sub] ? { accountId: sub, claims: async () => ({ sub, ...accounts[sub] }) } : undefined),
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ['test-cookie-key'] },
  } as never);
  const callback = provider.callback();
  idp.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    // The provider's login and consent steps, answered at once for `nextAccount`.
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await provider.interactionFinished(req, res, { login: { accountId: nextAccount } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: details.params.client_id as string });
      grant.addOIDCScope(String(details.params.scope));
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    } catch (err) {
      res.statusCode = 500;
      res.end(String(err));
    }
  });
  process.env.SVC_SECRET_OIDC_GATE_CLIENT = CLIENT_SECRET;
});
afterAll(async () => {
  delete process.env.SVC_SECRET_OIDC_GATE_CLIENT;
  await new Promise((r) => idp.close(r));
});

let ctx: TestContext;
let server: RunningServer;
let base: string;
let owner: Session;
let tenantId: string;
let adaId: string;
beforeEach(async () => {
  ctx = await createTestContext({
    env: {
      PORT: String(companionPort),
      SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${companionPort}`,
      SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
      SVC_SECRET_GRANTS: JSON.stringify({ '*': [SECRET_REF] }),
    },
  });
  server = await startServer(ctx.app, { host: '127.0.0.1', port: companionPort, graceMs: 1000, log: ctx.log });
  base = server.url;
  const signup = await ctx.signup();
  tenantId = signup.tenantId;
  owner = await signIn(ctx, signup.apiKey);
  const added = await owner.request('/account/people', { json: { email: 'ada@example.com', display_name: 'Ada', capabilities: ['reviews:decide', 'records:read'] } });
  expect(added.status, added.text).toBe(201);
  adaId = added.body.person.id;
  const saved = await owner.request('/account/identity-provider', { method: 'PUT', json: { issuer, client_id: CLIENT_ID, client_secret_ref: SECRET_REF, email_domains: ['Example.com'] } });
  expect(saved.status, saved.text).toBe(200);
  nextAccount = 'sub-ada';
});
afterEach(async () => {
  await server.close();
  await ctx.close();
});

/** A browser's cookies, per origin, and a GET that does not follow redirects. */
class Browser {
  readonly jar = new Map<string, Map<string, string>>();
  async get(url: string): Promise<{ status: number; location: string | null; body: string; headers: Headers }> {
    const origin = new URL(url).origin;
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    const res = await fetch(url, { redirect: 'manual', headers: cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/max-age=0/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(origin, cookies);
    const location = res.headers.get('location');
    return { status: res.status, location: location && new URL(location, url).href, body: await res.text(), headers: res.headers };
  }
  cookie(origin: string, name: string): string | undefined {
    return this.jar.get(origin)?.get(name);
  }
}

/** From the start URL through the provider, stopping at the companion's callback (not requested). */
async function toCallback(browser: Browser, startQuery = 'email=ada@example.com'): Promise<string> {
  const start = await browser.get(`${base}/account/oidc/start?${startQuery}`);
  expect(start.status, start.body).toBe(302);
  let url = start.location!;
  for (let hops = 0; hops < 12; hops++) {
    if (url.startsWith(`${base}/account/oidc/callback`)) return url;
    const res = await browser.get(url);
    expect([302, 303], `${url}: ${res.body}`).toContain(res.status);
    url = res.location!;
  }
  throw new Error('the provider never redirected back');
}

async function signInWithProvider(browser: Browser): Promise<{ status: number; location: string | null; body: string; headers: Headers }> {
  return browser.get(await toCallback(browser));
}

const sessionCount = async () => (await ctx.sql<{ n: number }>('SELECT count(*) AS n FROM account_sessions'))[0]!.n;

describe('OpenID Connect sign-in', () => {
  it('runs the code flow with PKCE S256, state and nonce, and signs the person in with their own capabilities', async () => {
    const browser = new Browser();
    const start = await browser.get(`${base}/account/oidc/start?email=ada@example.com`);
    expect(start.status).toBe(302);
    const auth = new URL(start.location!);
    expect(auth.origin).toBe(issuer);
    expect(Object.fromEntries(auth.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      redirect_uri: `${base}/account/oidc/callback`,
      login_hint: 'ada@example.com',
    });
    expect(auth.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(auth.searchParams.get('nonce')).toBeTruthy();
    const setCookie = start.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^svc_oidc_state=/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    expect(setCookie).toContain('Path=/account/oidc/callback');
    // Only the state's digest is stored, never the state.
    expect(JSON.stringify(await ctx.dump())).not.toContain(auth.searchParams.get('state'));

    let url = start.location!;
    while (!url.startsWith(`${base}/account/oidc/callback`)) url = (await browser.get(url)).location!;
    const done = await browser.get(url);
    expect(done.status, done.body).toBe(302);
    const landing = new URL(done.location!);
    expect(`${landing.origin}${landing.pathname}`).toBe(`${base}/console`);
    const csrf = /^#\/signed-in\?csrf_token=([A-Za-z0-9_-]{43})$/.exec(landing.hash)?.[1];
    expect(csrf).toBeDefined();
    const session = browser.cookie(base, 'svc_session')!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(done.headers.getSetCookie().find((c) => c.startsWith('svc_session='))).toContain('SameSite=Strict');

    const me = await ctx.request('/account/me', { headers: { cookie: `svc_session=${session}` } });
    expect(me.status, me.text).toBe(200);
    expect(me.body.tenant_id).toBe(tenantId);
    expect(me.body.principal).toEqual({ id: adaId, kind: 'person', display_name: 'Ada' });
    expect(me.body.capabilities).toEqual(['reviews:decide', 'gate:submit', 'records:write', 'records:read'].filter((c) => me.body.capabilities.includes(c)));
    expect(me.body.capabilities).toContain('reviews:decide');
    expect(me.body.capabilities).not.toContain('people:manage');
    // The CSRF token from the fragment is the session's: a write with it passes the CSRF check.
    const write = await ctx.request('/account/logout', { method: 'POST', headers: { cookie: `svc_session=${session}`, 'x-csrf-token': csrf! } });
    expect(write.status).toBe(200);
  });

  it('links the subject on the first sign-in, and later finds the person by the subject alone', async () => {
    expect((await signInWithProvider(new Browser())).status).toBe(302);
    const [link] = await ctx.sql<{ person_id: string; subject: string; issuer: string }>('SELECT person_id, subject, issuer FROM oidc_subjects');
    expect(link).toEqual({ person_id: adaId, subject: 'sub-ada', issuer });
    // The provider now asserts another email for the same subject: the link decides.
    accounts['sub-ada'] = { email: 'ada.lovelace@elsewhere.example', email_verified: false };
    try {
      const again = await signInWithProvider(new Browser());
      expect(again.status, again.body).toBe(302);
    } finally {
      accounts['sub-ada'] = { email: 'ada@example.com', email_verified: true };
    }
    // The key anchoring these sessions holds no secret and authenticates nothing.
    const keys = await owner.request('/account/api-keys');
    expect(keys.body.keys.filter((k: { label: string | null }) => k.label?.startsWith('OpenID Connect'))).toEqual([expect.objectContaining({ status: 'revoked' })]);
  });

  it('refuses a deactivated person and makes no session', async () => {
    expect((await owner.request(`/account/people/${adaId}`, { method: 'PATCH', json: { status: 'deactivated' } })).status).toBe(200);
    const before = await sessionCount();
    const res = await signInWithProvider(new Browser());
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'sign_in_refused', reason: 'person_deactivated' });
    expect(await sessionCount()).toBe(before);
  });

  it('refuses a person the tenant does not have, and an unverified email', async () => {
    nextAccount = 'sub-stranger';
    const stranger = await signInWithProvider(new Browser());
    expect(JSON.parse(stranger.body)).toMatchObject({ code: 'sign_in_refused', reason: 'person_unknown' });
    nextAccount = 'sub-unverified';
    const unverified = await signInWithProvider(new Browser());
    expect(JSON.parse(unverified.body)).toMatchObject({ code: 'sign_in_refused', reason: 'email_not_verified' });
    // A person of the tenant whose email is of a domain this provider does not sign in.
    expect((await owner.request('/account/people', { json: { email: 'carol@other.example', capabilities: [] } })).status).toBe(201);
    nextAccount = 'sub-carol';
    const otherDomain = await signInWithProvider(new Browser());
    expect(JSON.parse(otherDomain.body)).toMatchObject({ code: 'sign_in_refused', reason: 'person_unknown' });
    expect(await ctx.sql('SELECT * FROM oidc_subjects')).toEqual([]);
  });

  it("refuses an answer carried to another browser (state not this browser's), and a state used twice", async () => {
    const victim = new Browser();
    const attackerCallback = await toCallback(new Browser());
    // The victim's browser has no state cookie (or another one): refused before any code exchange.
    await victim.get(`${base}/account/oidc/start?email=ada@example.com`);
    const res = await victim.get(attackerCallback);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'sign_in_refused', reason: 'state_mismatch' });
    expect(victim.cookie(base, 'svc_session')).toBeUndefined();

    const browser = new Browser();
    const callback = await toCallback(browser);
    const state = browser.cookie(base, 'svc_oidc_state')!;
    expect((await browser.get(callback)).status).toBe(302);
    // Replayed with the same cookie: the stored request was used once.
    browser.jar.get(base)!.set('svc_oidc_state', state);
    const replay = await browser.get(callback);
    expect(JSON.parse(replay.body)).toMatchObject({ code: 'sign_in_refused', reason: 'state_mismatch' });
  });

  it('refuses an ID token whose nonce is not the one this request sent', async () => {
    const browser = new Browser();
    const callback = await toCallback(browser);
    await ctx.sql("UPDATE oidc_logins SET nonce = 'not-the-nonce-that-was-sent'");
    const res = await browser.get(callback);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'sign_in_refused', reason: 'response_not_verified' });
    expect(browser.cookie(base, 'svc_session')).toBeUndefined();
  });

  it('refuses a code exchanged with another PKCE verifier', async () => {
    const browser = new Browser();
    const callback = await toCallback(browser);
    await ctx.sql("UPDATE oidc_logins SET code_verifier = 'a-verifier-that-does-not-match-the-challenge-sent-abcdefghij'");
    const res = await browser.get(callback);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'sign_in_refused', reason: 'response_not_verified' });
  });
});

describe('PUT /account/identity-provider', () => {
  it('takes the client secret only as a granted reference, an allowed issuer URL and domain names', async () => {
    const bad = await owner.request('/account/identity-provider', {
      method: 'PUT',
      json: { issuer: 'http://10.0.0.1/', client_id: CLIENT_ID, client_secret_ref: 'the-secret-itself', email_domains: ['not a domain'] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/client_secret_ref', '/email_domains/0', '/issuer']);
    expect(bad.text).not.toContain('the-secret-itself');
    const got = await owner.request('/account/identity-provider');
    expect(got.body).toMatchObject({ issuer, client_id: CLIENT_ID, client_secret_ref: SECRET_REF, email_domains: ['example.com'], redirect_uri: `${base}/account/oidc/callback` });
  });

  it('needs people:manage, and one domain names one tenant', async () => {
    const member = await owner.request('/account/people', { json: { email: 'bob@example.com', capabilities: ['records:read'] } });
    const bob = await signIn(ctx, member.body.api_key);
    expect((await bob.request('/account/identity-provider')).status).toBe(403);
    const other = await ctx.signup();
    const otherOwner = await signIn(ctx, other.apiKey);
    const taken = await otherOwner.request('/account/identity-provider', { method: 'PUT', json: { issuer, client_id: 'x', email_domains: ['example.com'] } });
    expect(taken).toMatchObject({ status: 409, body: { code: 'identity_provider_domain_taken' } });
    const unknown = await ctx.request('/account/oidc/start?email=someone@nowhere.example');
    expect(unknown.status).toBe(404);
    // The refused change sealed nothing for the other tenant.
    expect((await otherOwner.request('/account/audit')).body.receipts.filter((r: { action: string }) => r.action.startsWith('identity_provider.'))).toEqual([]);
  });

  it('seals setting and removing the provider as admin receipts naming who did it, never a secret value', async () => {
    const me = (await owner.request('/account/me')).body;
    const audit = async () => (await owner.request('/account/audit')).body.receipts.filter((r: { action: string }) => r.action.startsWith('identity_provider.'));
    const [set] = await audit();
    expect(set).toMatchObject({ action: 'identity_provider.set', actor_id: me.principal.id, facts: { related: { issuer, client_id: CLIENT_ID, client_secret_ref: SECRET_REF, email_domains: 'example.com' } } });
    expect((await owner.request('/account/identity-provider', { method: 'DELETE' })).status).toBe(200);
    const [removed] = await audit();
    expect(removed).toMatchObject({ action: 'identity_provider.removed', actor_id: me.principal.id });
    expect((await owner.request(`/v1/records/${encodeURIComponent(removed.action_key)}`)).status).toBe(200);
    expect((await owner.request('/account/identity-provider', { method: 'DELETE' })).status).toBe(404);
    expect(await audit()).toHaveLength(2);
  });
});
