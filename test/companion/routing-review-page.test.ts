/**
 * Routes outside the browser get a link, never the context: every route dispatch (chat,
 * workflow, webhook) carries review_page_url, the console's page for the action built from
 * SVC_PUBLIC_BASE_URL, and the chat message links to it; the encrypted review context a
 * reviewer decides on is opened only there. The context is posted (sealed to a reviewer's device
 * key with shared/hpke.ts, as the extension does) before the dispatches are sent, and the bytes
 * each loopback platform receives hold neither its plaintext canary nor any of its ciphertext.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fromBase64Url, toBase64Url } from '../../shared/encoding.ts';
import { encodeReviewContext, rawPublicKey, REVIEW_CONTEXT_FORMAT, sealReviewContext } from '../../shared/hpke.ts';
import { gateBody } from './pack-fixtures.ts';
import { SECRETS, putRoute, routedTenant, startStandIn } from './routing-fixtures.ts';
import type { RoutedTenant, StandIn } from './routing-fixtures.ts';

const BASE = 'https://gate.example.com';
const CANARY = 'CANARY-DISPATCH-7f3a-prompt';

let t: RoutedTenant;
const platforms: StandIn[] = [];
afterEach(async () => {
  expect(t.ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
  await t.ctx.close();
  for (const p of platforms.splice(0)) await p.close();
});

async function person(email: string, capabilities: string[]): Promise<string> {
  const res = await t.ctx.request('/account/people', { json: { email, display_name: email.split('@')[0], capabilities }, key: t.key });
  expect(res.status, res.text).toBe(201);
  return res.body.api_key as string;
}

async function drain(): Promise<number> {
  let claimed = 0;
  for (let i = 0; i < 20; i++) {
    const n = (await t.ctx.deps.routing.worker.tick()).claimed;
    if (n === 0) return claimed;
    claimed += n;
  }
  throw new Error('the route queue did not drain');
}

/** The employee's paused action, its context sealed to every recipient and posted; the ciphertexts. */
async function pauseAndShare(employeeKey: string, actionType: string): Promise<{ actionKey: string; ciphertexts: { enc: string; ct: string }[] }> {
  const body = gateBody('law', { action_type: actionType, redacted_text: `Summarise the memo ${CANARY}` });
  const gate = await t.ctx.request('/v1/gate', { json: body, key: employeeKey });
  expect(gate.status, gate.text).toBe(201);
  expect(gate.body.decision).toBe('needs_review');
  const actionKey = gate.body.action_key as string;
  const recipients = await t.ctx.request(`/v1/reviews/${actionKey}/context-recipients`, { key: employeeKey });
  expect(recipients.status, recipients.text).toBe(200);
  expect(recipients.body.recipients.length).toBeGreaterThan(0);
  const plaintext = encodeReviewContext({ format: REVIEW_CONTEXT_FORMAT, gate_request: body });
  const binding = { action_key: actionKey, payload_hash: gate.body.payload_hash as string };
  const ciphertexts = [];
  for (const r of recipients.body.recipients as { key_id: string; public_key: string }[]) {
    const sealed = await sealReviewContext(fromBase64Url(r.public_key), plaintext, binding);
    ciphertexts.push({ key_id: r.key_id, enc: toBase64Url(sealed.enc), ct: toBase64Url(sealed.ct) });
  }
  const posted = await t.ctx.request(`/v1/reviews/${actionKey}/context`, { json: { ciphertexts }, key: employeeKey });
  expect(posted.status, posted.text).toBe(201);
  return { actionKey, ciphertexts };
}

describe('route dispatches link to the console review page', () => {
  it('chat, workflow and webhook dispatches carry review_page_url from SVC_PUBLIC_BASE_URL and no context', async () => {
    const chat = await startStandIn(() => ({ status: 200, body: '{"ok":true}' }));
    const workflow = await startStandIn(() => ({ status: 201 }));
    const webhook = await startStandIn(() => ({ status: 200 }));
    platforms.push(chat, workflow, webhook);
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1', SVC_PUBLIC_BASE_URL: BASE });
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C0123456789', url: chat.url, signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: workflow.url, callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
    await putRoute(t, 'webhook', 'ops', { enabled: true, config: { url: webhook.url, events: [] } });
    const routes = { 'proposed-action': 'chat:legal-desk', 'legal-research-memo': 'workflow:privacy-office', 'court-filing': 'webhook:ops' };
    const policy = await t.ctx.request('/tenant/policy?policy_pack=law', {
      method: 'PUT',
      json: { review_context: 'encrypted', review_action_types: Object.keys(routes), review_routes: routes },
      key: t.key,
    });
    expect(policy.status, policy.text).toBeLessThan(300);

    const employeeKey = await person('emma@firm.example', []);
    const reviewerKey = await person('rita@firm.example', ['reviews:decide']);
    const pair = (await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])) as CryptoKeyPair;
    const device = await t.ctx.request('/account/me/review-keys', { json: { public_key: toBase64Url(await rawPublicKey(pair.publicKey)), label: 'laptop' }, key: reviewerKey });
    expect(device.status, device.text).toBe(201);

    const shared = {
      chat: await pauseAndShare(employeeKey, 'proposed-action'),
      workflow: await pauseAndShare(employeeKey, 'legal-research-memo'),
      webhook: await pauseAndShare(employeeKey, 'court-filing'),
    };
    expect(await drain()).toBe(3);
    const sent = { chat: chat.requests, workflow: workflow.requests, webhook: webhook.requests };
    const needles = [CANARY, ...Object.values(shared).flatMap((s) => s.ciphertexts.flatMap((c) => [c.ct.slice(0, 32), c.enc.slice(0, 32)]))];
    for (const channel of ['chat', 'workflow', 'webhook'] as const) {
      const { actionKey } = shared[channel];
      expect(sent[channel], channel).toHaveLength(1);
      const raw = sent[channel][0]!.raw.toString('utf8');
      const payload = JSON.parse(raw);
      // The console is served at /console and addresses the page by fragment; ':' stays readable there.
      const url = `${BASE}/console#/reviews/${actionKey}`;
      expect(payload, channel).toMatchObject({ action_key: actionKey, review_page_url: url, raw_content_stored: false });
      for (const needle of needles) expect(raw, `${channel} dispatch holds ${needle}`).not.toContain(needle);
      // What the outbox shows is what was sent.
      const listed = (await t.ctx.request('/routing/outbox', { key: t.key })).body.dispatches.find((d: { action_key: string }) => d.action_key === actionKey);
      expect(listed.payload.review_page_url).toBe(url);
    }

    // Slack: the message's fallback text and its summary block link to the page, as mrkdwn <url|text>.
    const chatPayload = JSON.parse(sent.chat[0]!.raw.toString('utf8'));
    const link = `<${BASE}/console#/reviews/${shared.chat.actionKey}|Open in the console to see what was gated>`;
    expect(chatPayload.text).toContain(link);
    expect(chatPayload.blocks.find((b: { block_id: string }) => b.block_id === 'summary').text.text).toContain(link);
    expect(chatPayload.chat.modal_view.blocks.find((b: { block_id: string }) => b.block_id === 'summary').text.text).toContain(link);
    // ServiceNow: the flow's trigger exposes the link as a data pill, and the task's description carries it.
    const workflowPayload = JSON.parse(sent.workflow[0]!.raw.toString('utf8'));
    expect(workflowPayload.workflow.flow_trigger.request_body_data_pills.map((p: { name: string }) => p.name)).toContain('review_page_url');
    expect(workflowPayload.workflow.task_fields.description).toContain(`${BASE}/console#/reviews/${shared.workflow.actionKey}`);
  });

  it('builds the link from the configured base URL, whatever Host the request named', async () => {
    const webhook = await startStandIn(() => ({ status: 200 }));
    platforms.push(webhook);
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1', SVC_PUBLIC_BASE_URL: 'https://reviews.firm.example:8443' });
    await putRoute(t, 'webhook', 'ops', { enabled: true, config: { url: webhook.url, events: [] } });
    const policy = await t.ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: { review_action_types: ['proposed-action'], review_routes: { 'proposed-action': 'webhook:ops' } }, key: t.key });
    expect(policy.status, policy.text).toBeLessThan(300);
    const gate = await t.ctx.request('/v1/gate', { json: gateBody('law'), key: t.key, headers: { host: 'attacker.example' } });
    expect(gate.body.decision).toBe('needs_review');
    expect(await drain()).toBe(1);
    const payload = JSON.parse(webhook.requests[0]!.raw.toString('utf8'));
    expect(payload.review_page_url).toBe(`https://reviews.firm.example:8443/console#/reviews/${gate.body.action_key}`);
  });
});
