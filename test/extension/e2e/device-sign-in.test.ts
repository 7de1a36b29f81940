/**
 * The extension's "Sign in with your organisation" (OAuth 2.0 device authorization grant,
 * RFC 8628) end to end: the options page (reviewer role) asks the companion for codes and shows
 * the user code; the console tab it opened (verification_uri_complete, RFC 8628 §3.3.1) is
 * signed in as the person, who approves the code; the options page's polling (§3.4) receives a
 * person-bound key narrowed to the granted capabilities and keeps it in place of an API key; the
 * reviewer popup lists a paused action with it; once the person revokes the key from their
 * session, the extension's next call is refused.
 *
 * Real Chromium with the packaged extension, the console built from its sources, and the real
 * companion process on loopback.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildConsole } from '../../../scripts/build-console.mjs';
import { gateBody } from '../../companion/pack-fixtures.ts';
import { cleanupCompanions, start, tempDataDir } from '../../helpers/companion-process.ts';
import type { Companion } from '../../helpers/companion-process.ts';
import { launchWithExtension, screenshot } from './harness/browser.ts';
import type { ExtensionBrowser } from './harness/browser.ts';
import { getJson, signUp } from './harness/tenant.ts';

const PERSON_EMAIL = 'reviewer.ada@firm.example';

let companion: Companion;
let browser: ExtensionBrowser;
let consoleDir: string;
let ownerKey: string;
let personId: string;
let personKey: string;
let personKeyId: string;

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function postJson(p: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${companion.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** An extension message, sent from one of its pages as the popup and options page do. */
function message(page: Page, type: string): Promise<{ ok: boolean; value?: any; error?: string }> {
  return page.evaluate((t) => (globalThis as any).chrome.runtime.sendMessage({ type: t, payload: {} }), type);
}

beforeAll(async () => {
  consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-console-'));
  await buildConsole(consoleDir);
  // A fixed port so the public origin, and so verification_uri (RFC 8628 §5.2), is the real one.
  const port = await freePort();
  companion = await start(tempDataDir(), { PORT: String(port), SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, SVC_CONSOLE_DIR: consoleDir });
  ownerKey = await signUp(companion.url, 'owner@firm.example');
  const added = await postJson('/account/people', { 'x-service-key': ownerKey }, { email: PERSON_EMAIL, display_name: 'Ada', capabilities: ['reviews:decide', 'records:read'] });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  // The person's own key, shown once when they are added: their console sign-in here.
  personId = added.body.person.id;
  personKey = added.body.api_key;
  personKeyId = added.body.api_key_id;
  browser = await launchWithExtension('device-sign-in');
  browser.context.setDefaultTimeout(15_000);
});

afterAll(async () => {
  await browser?.close();
  cleanupCompanions();
  if (consoleDir) fs.rmSync(consoleDir, { recursive: true, force: true });
});

it('signs the reviewer in through the console, lists a paused action with the person-bound key, and is refused once the key is revoked', async () => {
  const options = await browser.openExtensionPage('options.html');
  await options.locator('#companion-url').fill(companion.url);
  await options.locator('#role').selectOption('reviewer');

  // The button opens the console's approval page in a tab of its own.
  const opened = browser.context.waitForEvent('page');
  await options.getByRole('button', { name: 'Sign in with your organisation' }).click();
  const userCode = (await options.locator('.ag-user-code').textContent())!;
  expect(userCode).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
  const approval = await opened;
  await approval.waitForURL(`${companion.url}/console#/device?user_code=${userCode}`);
  await options.setViewportSize({ width: 1000, height: 1500 });
  await screenshot(options, 'device-sign-in-code');

  // Not signed in to the console yet: the person signs in (API key sign-in), then approves the code.
  await approval.getByLabel('API key').fill(personKey);
  await approval.getByRole('button', { name: 'Sign in' }).click();
  await approval.getByRole('heading', { name: 'Approve a device' }).waitFor();
  await approval.getByText('Action Gate browser extension').waitFor();
  await approval.getByRole('button', { name: 'Approve' }).click();
  await approval.getByText('Approved: return to the device').waitFor();
  await screenshot(approval, 'device-sign-in-approved');

  // The person returns to the options page, as the console tells them to; its next poll
  // receives the key and keeps it in place of an API key (RFC 8628 §3.4-3.5: a few rounds of
  // polling at the companion's interval, so a longer wait on a busy machine).
  await options.bringToFront();
  await options.getByText(/^Signed in\. This browser now acts for you with: reviews:decide records:read\./).waitFor({ timeout: 30_000 });
  // The role the sign-in belongs to is kept with the key, so the popup is the reviewer's.
  expect(await options.locator('#role').inputValue()).toBe('reviewer');
  await screenshot(options, 'device-sign-in-signed-in');
  const stored = await options.evaluate(() => (globalThis as any).chrome.storage.local.get(null));
  const storedKey = JSON.stringify(stored).match(/svc_test_[A-Za-z0-9_-]+/g) ?? [];
  expect(storedKey).toHaveLength(1);
  const deviceKey = storedKey[0]!;
  expect(deviceKey).not.toBe(personKey);
  expect(await options.locator('#api-key').inputValue()).toBe(deviceKey);

  // A person-bound key for Ada, narrowed to what was granted.
  const { keys } = await getJson(companion.url, ownerKey, '/account/api-keys');
  const issued = keys.filter((k: any) => k.principal.id === personId && k.id !== personKeyId);
  expect(issued).toHaveLength(1);
  expect(issued[0]).toMatchObject({ prefix: 'svc_test_', last_four: deviceKey.slice(-4), status: 'active' });
  expect([...issued[0].capability_subset].sort()).toEqual(['records:read', 'reviews:decide']);
  expect([...issued[0].capabilities].sort()).toEqual(['records:read', 'reviews:decide']);
  expect(issued[0].principal).toMatchObject({ id: personId, kind: 'person' });
  const session = await postJson('/account/session', { 'x-service-key': deviceKey }, {});
  expect(session.status).toBe(201);
  expect(session.body.principal).toMatchObject({ id: personId, kind: 'person' });

  // A paused action, listed in the reviewer popup with the device's key.
  const gate = await postJson('/v1/gate', { 'x-service-key': ownerKey }, gateBody('law'));
  expect(gate.status, JSON.stringify(gate.body)).toBe(201);
  expect(gate.body.decision).toBe('needs_review');
  const popup = await browser.openExtensionPage('popup.html');
  await popup.locator('.ag-reviewer').waitFor();
  await popup.locator(`.ag-pending-item[data-action-key="${gate.body.action_key}"]`).waitFor();
  await screenshot(popup, 'device-sign-in-popup');
  const pending = await message(popup, 'reviews.pending');
  expect(pending.ok, pending.error).toBe(true);
  expect(pending.value.map((p: any) => p.action_key)).toContain(gate.body.action_key);

  // Ada revokes the device's key from her own session; the extension's next call is refused.
  const signedIn = await fetch(`${companion.url}/account/session`, { method: 'POST', headers: { 'x-service-key': personKey } });
  expect(signedIn.status).toBe(201);
  const cookie = /^(svc_session=[^;]+)/.exec(signedIn.headers.get('set-cookie') ?? '')![1]!;
  const csrf = ((await signedIn.json()) as { csrf_token: string }).csrf_token;
  const tokens = (await (await fetch(`${companion.url}/account/device-tokens`, { headers: { cookie } })).json()) as { tokens: { key_id: string; status: string; capabilities: string[] }[] };
  expect(tokens.tokens).toHaveLength(1);
  expect(tokens.tokens[0]).toMatchObject({ key_id: issued[0].id, status: 'active' });
  const revoked = await fetch(`${companion.url}/account/device-tokens/${issued[0].id}/revoke`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
  expect(revoked.status, await revoked.clone().text()).toBe(200);

  const refused = await message(popup, 'reviews.pending');
  expect(refused.ok).toBe(false);
  expect(refused.error).toMatch(/answered 401 \(unauthorized\): the credential is not valid/);
  await popup.locator('.ag-header button', { hasText: 'Refresh' }).click();
  await popup.locator('.ag-reviewer .ag-problem', { hasText: 'answered 401' }).waitFor();
  await screenshot(popup, 'device-sign-in-revoked');
  // The board the popup reads, asked directly with the device's key: refused, not merely empty.
  const direct = await fetch(`${companion.url}/active-manifest?limit=200`, { headers: { 'x-service-key': deviceKey } });
  expect(direct.status).toBe(401);
}, 90_000);

