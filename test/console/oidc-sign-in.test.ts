/**
 * The console in real Chromium: sign-in with the organisation's OpenID Connect provider
 * (`oidc-provider` on loopback) through the console's own form, back to a working session whose
 * writes carry the CSRF token from the return fragment; then the device page approves the
 * extension's user code, and the device's next poll receives a key acting for that person.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { buildConsole } from '../../scripts/build-console.mjs';
import { CHROMIUM, chromiumArgs } from '../extension/e2e/harness/browser.ts';
import { signIn as apiSignIn } from '../companion/account-helpers.ts';
import { createTestContext } from '../companion/helpers.ts';
import type { TestContext } from '../companion/helpers.ts';

const CLIENT_ID = 'action-gate';
const CLIENT_SECRET = 'a-client-secret-of-the-browser-test-provider';
const SECRET_REF = 'secret://oidc/console-client';

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

let idp: http.Server;
let issuer: string;
let ctx: TestContext;
let server: RunningServer;
let consoleDir: string;

beforeAll(async () => {
  const port = await freePort();
  idp = http.createServer();
  await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`http://127.0.0.1:${port}/account/oidc/callback`], grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, email: 'ada@firm.example', email_verified: true }) }),
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ['browser-test-cookie-key'] },
  } as never);
  const callback = provider.callback();
  idp.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    // The provider's login and consent, answered at once for Ada.
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === 'login') return provider.interactionFinished(req, res, { login: { accountId: 'sub-ada' } }, { mergeWithLastSubmission: false });
    const grant = new provider.Grant({ accountId: details.session!.accountId, clientId: CLIENT_ID });
    grant.addOIDCScope(String(details.params.scope));
    return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  });
  process.env.SVC_SECRET_OIDC_CONSOLE_CLIENT = CLIENT_SECRET;
  consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-console-'));
  await buildConsole(consoleDir);
  ctx = await createTestContext({
    env: {
      SVC_CONSOLE_DIR: consoleDir,
      PORT: String(port),
      SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
      SVC_SECRET_GRANTS: JSON.stringify({ '*': [SECRET_REF] }),
    },
  });
  ctx.clock.set(Date.now());
  server = await startServer(ctx.app, { host: '127.0.0.1', port, graceMs: 500, log: ctx.log });
});
afterAll(async () => {
  await server?.close();
  await ctx?.close();
  await new Promise((r) => idp.close(r));
  fs.rmSync(consoleDir, { recursive: true, force: true });
  delete process.env.SVC_SECRET_OIDC_CONSOLE_CLIENT;
});

it('signs a person in through the provider, then approves the extension’s code on the device page', async () => {
  const { apiKey } = await ctx.signup(`owner.${process.pid}@firm.example`);
  const owner = await apiSignIn(ctx, apiKey);
  const added = await owner.request('/account/people', { json: { email: 'ada@firm.example', display_name: 'Ada', capabilities: ['reviews:decide', 'records:read'] } });
  expect(added.status, added.text).toBe(201);
  const saved = await owner.request('/account/identity-provider', { method: 'PUT', json: { issuer, client_id: CLIENT_ID, client_secret_ref: SECRET_REF, email_domains: ['firm.example'] } });
  expect(saved.status, saved.text).toBe(200);

  // The extension asks for codes; its person follows verification_uri_complete, not yet signed in.
  const form = (p: string, fields: Record<string, string>) =>
    fetch(`${server.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  const device = (await (await form('/oauth/device_authorization', { client_id: 'action-gate-extension' })).json()) as { device_code: string; user_code: string; verification_uri_complete: string };

  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: chromiumArgs(null) });
  try {
    const page = await (await browser.newContext()).newPage();
    await page.goto(device.verification_uri_complete);
    await page.getByLabel('Work email').fill('ada@firm.example');
    await page.getByRole('button', { name: 'Continue to your organisation’s sign-in' }).click();
    // Back from the provider: signed in, on the device page the link named, the fragment's token gone.
    await page.getByRole('heading', { name: 'Approve a device' }).waitFor();
    await expect.poll(() => page.url()).toBe(`${server.url}/console#/device?user_code=${device.user_code}`);
    const cookies = await page.context().cookies(server.url);
    expect(cookies.find((c) => c.name === 'svc_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await page.getByText('Action Gate browser extension').waitFor();
    // The approval is a session write: it carries the CSRF token the return fragment delivered.
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: return to the device').waitFor();
  } finally {
    await browser.close();
  }
  const token = (await (await form('/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: 'action-gate-extension' })).json()) as { access_token: string; scope: string };
  expect(token.scope).toBe('reviews:decide records:read');
  const session = await ctx.request('/account/session', { method: 'POST', key: token.access_token });
  expect(session.body.principal).toEqual({ id: added.body.person.id, kind: 'person', display_name: 'Ada' });
});
