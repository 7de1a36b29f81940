/**
 * The OAuth 2.0 device authorization grant (RFC 8628) over HTTP on loopback: the device asks for
 * codes and polls /oauth/token (authorization_pending, slow_down, access_denied, expired_token);
 * a person signed in to the console approves, and the device receives a key that acts for that
 * person with at most the person's capabilities, is listed and revocable, and stops when the
 * person is deactivated.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import { pollDeviceToken, startDeviceSignIn } from '../../extension/utils/device-sign-in.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { signIn } from './account-helpers.ts';
import type { Session } from './account-helpers.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

const CLIENT_ID = 'action-gate-extension';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

let ctx: TestContext;
let key: string;
let server: RunningServer;
let owner: Session;
beforeEach(async () => {
  ({ ctx, key } = await freshTenantContext());
  server = await startServer(ctx.app, { host: '127.0.0.1', port: 0, graceMs: 1000, log: ctx.log });
  owner = await signIn(ctx, key);
});
afterEach(async () => {
  await server.close();
  await ctx.close();
});

async function form(path: string, fields: Record<string, string>): Promise<{ status: number; type: string | null; cache: string | null; body: any }> {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  return { status: res.status, type: res.headers.get('content-type'), cache: res.headers.get('cache-control'), body: await res.json() };
}

async function authorize(scope?: string) {
  const res = await form('/oauth/device_authorization', { client_id: CLIENT_ID, ...(scope === undefined ? {} : { scope }) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
}

const poll = (deviceCode: string, clientId = CLIENT_ID) => form('/oauth/token', { grant_type: GRANT_TYPE, device_code: deviceCode, client_id: clientId });

/** Waits out the poll interval on the service's clock, as a well-behaved device does. */
const waitInterval = (seconds = 5) => ctx.clock.advance(seconds * 1000);

let people = 0;
async function member(capabilities: string[]): Promise<{ id: string; session: Session }> {
  const added = await owner.request('/account/people', { json: { email: `device${++people}@example.com`, capabilities: [] } });
  expect(added.status, added.text).toBe(201);
  const id = added.body.person.id as string;
  const patched = await owner.request(`/account/people/${id}`, { method: 'PATCH', json: { capabilities } });
  expect(patched.status, patched.text).toBe(200);
  return { id, session: await signIn(ctx, added.body.api_key) };
}

/** A records:read route (404 for an unknown record once authorised) and a reviews:decide one (a 422 for the empty body once authorised). */
const readRecord = (token: string) => ctx.request('/v1/records/law:unknown:01JD3Q8Z5V7N4M2K6H8G0F1E2D', { headers: { authorization: `Bearer ${token}` } });
const decide = (token: string) => ctx.request('/v1/reviews', { headers: { authorization: `Bearer ${token}` }, json: {} });

describe('POST /oauth/device_authorization (RFC 8628 §3.1, §3.2)', () => {
  it('answers a device code, an 8-character user code of the §6.1 alphabet, the console page and the interval', async () => {
    const res = await form('/oauth/device_authorization', { client_id: CLIENT_ID, scope: 'reviews:decide records:read' });
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.cache).toBe('no-store');
    expect(res.body).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${ctx.config.publicBaseUrl}/console#/device`,
      verification_uri_complete: `${ctx.config.publicBaseUrl}/console#/device?user_code=${res.body.user_code}`,
      expires_in: 600,
      interval: 5,
    });
  });

  it('refuses an unknown client, an unknown capability and a missing client_id with RFC 6749 §5.2 JSON errors', async () => {
    const unknownClient = await form('/oauth/device_authorization', { client_id: 'someone-else' });
    expect(unknownClient).toMatchObject({ status: 400, type: expect.stringMatching(/^application\/json/), body: { error: 'invalid_client' } });
    const badScope = await form('/oauth/device_authorization', { client_id: CLIENT_ID, scope: 'reviews:decide root' });
    expect(badScope).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
    expect(JSON.stringify(badScope.body)).not.toContain('root');
    expect(await form('/oauth/device_authorization', {})).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });
});

describe('POST /oauth/token (RFC 8628 §3.4, §3.5)', () => {
  it('answers authorization_pending, then slow_down to a device polling faster than the interval, which grows by 5 seconds', async () => {
    const dev = await authorize();
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, cache: 'no-store', body: { error: 'authorization_pending' } });
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, body: { error: 'slow_down', error_description: expect.stringContaining('10 seconds') } });
    // The interval is now 10 seconds: 5 is still too fast.
    waitInterval(5);
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, body: { error: 'slow_down' } });
    waitInterval(15);
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
  });

  it('answers access_denied once the person denies the request', async () => {
    const dev = await authorize();
    const denied = await owner.request(`/account/device-authorizations/${dev.user_code}/deny`, { method: 'POST' });
    expect(denied.status, denied.text).toBe(200);
    expect(denied.body.status).toBe('denied');
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    // A decided request cannot be approved afterwards.
    const late = await owner.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST' });
    expect(late).toMatchObject({ status: 409, body: { code: 'device_authorization_not_pending' } });
  });

  it('answers expired_token after expires_in, and the code can no longer be approved', async () => {
    const dev = await authorize();
    ctx.clock.advance(600_000);
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, body: { error: 'expired_token' } });
    const approve = await owner.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST' });
    expect(approve.status).toBe(404);
  });

  it('refuses an unknown device code, another client, another grant type and a missing field', async () => {
    const dev = await authorize();
    expect(await poll('x'.repeat(43))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await poll(dev.device_code, 'someone-else')).toMatchObject({ status: 400, body: { error: 'invalid_client' } });
    expect(await form('/oauth/token', { grant_type: 'authorization_code', code: 'x', client_id: CLIENT_ID })).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
    expect(await form('/oauth/token', { grant_type: GRANT_TYPE, client_id: CLIENT_ID })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });

  it('needs the session CSRF token to approve, and a session at all', async () => {
    const dev = await authorize();
    const noCsrf = await ctx.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST', headers: { cookie: owner.cookie } });
    expect(noCsrf).toMatchObject({ status: 403, body: { code: 'csrf_token_invalid' } });
    const withKey = await ctx.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST', key });
    expect(withKey.status).toBe(401);
    expect(await poll(dev.device_code)).toMatchObject({ body: { error: 'authorization_pending' } });
  });
});

describe('the approved token', () => {
  it("acts for the approving person with the requested capabilities that person holds, and nothing more", async () => {
    const reader = await member(['records:read']);
    const dev = await authorize('reviews:decide records:read');
    // The person sees what is asked and what approving would grant, typed in any case and without the dash.
    const seen = await reader.session.request(`/account/device-authorizations/${dev.user_code.replace('-', '').toLowerCase()}`);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body).toMatchObject({ client_id: CLIENT_ID, client_name: 'Action Gate browser extension', status: 'pending', requested: ['reviews:decide', 'records:read'], grantable: ['records:read'] });
    const approved = await reader.session.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST' });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body.status).toBe('approved');

    const issued = await poll(dev.device_code);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.cache).toBe('no-store');
    expect(issued.body).toEqual({ access_token: expect.stringMatching(/^svc_test_[0-9A-Za-z]{43}$/), token_type: 'Bearer', expires_in: 2_592_000, scope: 'records:read' });
    const token = issued.body.access_token as string;

    // Issued once.
    waitInterval();
    expect(await poll(dev.device_code)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    expect((await readRecord(token)).status).toBe(404);
    expect(await decide(token)).toMatchObject({ status: 403, body: { code: 'capability_missing', capability: 'reviews:decide' } });
    // The token's principal is the person.
    const session = await ctx.request('/account/session', { method: 'POST', key: token });
    expect(session.status).toBe(201);
    expect(session.body.principal.id).toBe(reader.id);
    expect(session.body.capabilities).toEqual(['records:read']);

    // Granting the person more later does not widen the token beyond what was approved.
    const widened = await owner.request(`/account/people/${reader.id}`, { method: 'PATCH', json: { capabilities: ['records:read', 'reviews:decide'] } });
    expect(widened.status).toBe(200);
    expect((await decide(token)).status).toBe(403);
    // Narrowing the person narrows the token at once.
    const narrowed = await owner.request(`/account/people/${reader.id}`, { method: 'PATCH', json: { capabilities: ['gate:submit'] } });
    expect(narrowed.status).toBe(200);
    expect(await readRecord(token)).toMatchObject({ status: 403, body: { capability: 'records:read' } });
  });

  it('is listed for the person and for people:manage, sealed as an admin receipt, and refused on the next request once the person revokes it', async () => {
    const reviewer = await member(['reviews:decide', 'records:read']);
    const dev = await authorize();
    expect((await reviewer.session.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST' })).status).toBe(200);
    const issued = await poll(dev.device_code);
    const token = issued.body.access_token as string;
    expect(issued.body.scope).toBe('reviews:decide records:read');
    expect((await readRecord(token)).status).toBe(404);

    const mine = await reviewer.session.request('/account/device-tokens');
    expect(mine.status).toBe(200);
    expect(mine.body.tokens).toEqual([
      expect.objectContaining({ client_id: CLIENT_ID, capabilities: ['reviews:decide', 'records:read'], status: 'active', expires_at: '2025-01-31T00:00:00.000Z' }),
    ]);
    const keyId = mine.body.tokens[0].key_id as string;
    const all = await owner.request('/account/api-keys');
    expect(all.body.keys.find((k: { id: string }) => k.id === keyId)).toMatchObject({ label: 'Device sign-in: Action Gate browser extension', capabilities: ['reviews:decide', 'records:read'] });
    const audit = await owner.request('/account/audit');
    expect(audit.body.receipts ?? audit.body.items ?? audit.text).toEqual(expect.arrayContaining([expect.objectContaining({ action: 'key.created', subject_id: keyId })]));

    // Someone else's device key is not theirs to revoke through this route.
    const other = await member(['records:read']);
    expect((await other.session.request(`/account/device-tokens/${keyId}/revoke`, { method: 'POST' })).status).toBe(404);

    const revoked = await reviewer.session.request(`/account/device-tokens/${keyId}/revoke`, { method: 'POST' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ key_id: keyId, status: 'revoked', receipt: { action_key: expect.stringMatching(/^account:admin:/) } });
    expect((await readRecord(token)).status).toBe(401);
    expect((await reviewer.session.request(`/account/device-tokens/${keyId}/revoke`, { method: 'POST' })).status).toBe(409);
  });

  it('stops at once when the person is deactivated, and an approval collected after deactivation issues nothing', async () => {
    const reviewer = await member(['reviews:decide', 'records:read']);
    const first = await authorize();
    expect((await reviewer.session.request(`/account/device-authorizations/${first.user_code}/approve`, { method: 'POST' })).status).toBe(200);
    const token = (await poll(first.device_code)).body.access_token as string;
    const second = await authorize();
    expect((await reviewer.session.request(`/account/device-authorizations/${second.user_code}/approve`, { method: 'POST' })).status).toBe(200);
    expect((await readRecord(token)).status).toBe(404);

    const off = await owner.request(`/account/people/${reviewer.id}`, { method: 'PATCH', json: { status: 'deactivated' } });
    expect(off.status, off.text).toBe(200);
    expect((await readRecord(token)).status).toBe(401);
    expect(await poll(second.device_code)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
  });

  it('is refused to a person holding none of the requested capabilities', async () => {
    const submitter = await member(['gate:submit']);
    const dev = await authorize('reviews:decide');
    const approve = await submitter.session.request(`/account/device-authorizations/${dev.user_code}/approve`, { method: 'POST' });
    expect(approve).toMatchObject({ status: 403, body: { code: 'capability_missing' } });
    expect(await poll(dev.device_code)).toMatchObject({ body: { error: 'authorization_pending' } });
  });
});

describe("the extension's sign-in (extension/utils/device-sign-in.ts)", () => {
  it('gets codes, keeps polling while pending, slows down when told, and receives the key once approved', async () => {
    const reviewer = await member(['reviews:decide', 'records:read']);
    const device = await startDeviceSignIn(server.url);
    expect(device.verification_uri_complete).toContain(device.user_code);
    const waits: number[] = [];
    let polls = 0;
    const result = await pollDeviceToken(server.url, device, {
      // The service's clock stands in for the wall clock; nothing here sleeps.
      wait: async (ms) => {
        waits.push(ms);
        polls++;
        // A poll too early on the third round (the device's clock ran fast): slow_down.
        if (polls !== 3) ctx.clock.advance(ms);
        if (polls === 4) {
          const approved = await reviewer.session.request(`/account/device-authorizations/${device.user_code}/approve`, { method: 'POST' });
          expect(approved.status, approved.text).toBe(200);
        }
      },
    });
    expect(result).toEqual({ ok: true, token: expect.stringMatching(/^svc_test_/), scope: 'reviews:decide records:read' });
    // 5 s, then 5 s again, the early third poll answered slow_down, then 10 s from there on.
    expect(waits).toEqual([5000, 5000, 5000, 10000]);
    if (result.ok) expect((await readRecord(result.token)).status).toBe(404);
  });

  it('reports a denial', async () => {
    const device = await startDeviceSignIn(server.url);
    const result = await pollDeviceToken(server.url, device, {
      wait: async (ms) => {
        ctx.clock.advance(ms);
        await owner.request(`/account/device-authorizations/${device.user_code}/deny`, { method: 'POST' });
      },
    });
    expect(result).toMatchObject({ ok: false, error: 'access_denied' });
  });
});
