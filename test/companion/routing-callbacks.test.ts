/**
 * Signed review callbacks and open-review-modal (interface-spec "Review callback body",
 * "Routing and integrations", Authentication 3; DESIGN.md §5). Every signature is made here
 * with node:crypto, independently of the service's code; Slack's own documented example is
 * checked from test/vectors/slack-signature.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyChatSignature } from '../../companion/routing/callbacks/signatures.ts';
import { MIRROR_DIGEST, MIRROR_VERSION } from '../../companion/reviews/mirror.ts';
import { createTestContext } from './helpers.ts';
import { SECRETS, VALUES, lawRoutesPolicy, nowSeconds, pauseLaw, pauseMedicineExport, putRoute, routedTenant, sha256Sig, slackSig } from './routing-fixtures.ts';
import type { RoutedTenant } from './routing-fixtures.ts';

const VECTOR = JSON.parse(fs.readFileSync(new URL('../vectors/slack-signature/slack_docs_example.json', import.meta.url), 'utf8'));

let t: RoutedTenant;
afterEach(async () => {
  expect(t.ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
  await t.ctx.close();
});

const WF_PATH = () => `/integrations/callbacks/${t.tenantId}/workflow/privacy-office/review-decision`;
const signedWorkflow = (raw: string, path = WF_PATH(), key = VALUES.ROUTING_TEST_CALLBACK) =>
  t.ctx.request(path, { method: 'POST', raw, headers: { 'content-type': 'application/json', 'x-service-signature': sha256Sig(key, raw) } });
/** A person holding reviews:decide, linked to a platform user: callbacks naming that user decide as them. */
let linked = 0;
async function linkedReviewer(provider: string, subject: string) {
  const added = await t.ctx.request('/account/people', { json: { email: `route-reviewer-${++linked}@example.com`, capabilities: ['reviews:decide'] }, key: t.key });
  expect(added.status, added.text).toBe(201);
  const id = added.body.person.id as string;
  const link = await t.ctx.request(`/account/people/${id}/identities`, { json: { provider, subject }, key: t.key });
  expect(link.status, link.text).toBe(201);
  return { id, platform_user: { provider, subject } };
}
const snapshot = async () =>
  JSON.stringify(await Promise.all(['sealed_records', 'review_items', 'route_dispatches'].map((table) => t.ctx.sql(`SELECT * FROM ${table} ORDER BY id`))));

async function workflowSetup() {
  t = await routedTenant();
  await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: 'https://acme.service-now.com/api/flow', callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
  const gate = await pauseMedicineExport(t);
  const [d] = (await t.ctx.request('/routing/outbox', { key: t.key })).body.dispatches;
  return { gate, dispatchKey: d.dispatch_key as string };
}

describe('POST …/workflow/{target}/review-decision', () => {
  it('seals the review receipt through the review path, resolves the dispatch and stores only decision metadata and the external reference', async () => {
    const { gate, dispatchKey } = await workflowSetup();
    const officer = await linkedReviewer('servicenow:acme', '6816f79cc0a8016401c5a33be04be441');
    const raw = JSON.stringify({ dispatch_key: dispatchKey, decision: 'approved', reviewer: 'privacy-officer-3', reason: 'consent on file for patient 42', external_reference: { sys_id: '9d385017c611228701d22104cc95c371', number: 'SCTASK0010001' }, platform_user: officer.platform_user });
    const res = await signedWorkflow(raw);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      dispatch_key: dispatchKey,
      external_reference: { number: 'SCTASK0010001' },
      review: { reviewed_action_key: gate.action_key, review_status: 'approved', reviewer: 'privacy-officer-3', principal: { principal_id: officer.id }, asserted_by: { route: 'workflow:privacy-office', ...officer.platform_user } },
    });
    expect(res.body.review.action_key).toMatch(/^medicine:review:/);

    const record = await t.ctx.request(`/v1/records/${gate.action_key}`, { key: t.key });
    expect(record.body.review).toMatchObject({ status: 'approved', reviewer: 'privacy-officer-3', receipt_action_key: res.body.review.action_key });
    const [d] = (await t.ctx.request('/routing/outbox', { key: t.key })).body.dispatches;
    expect(d.resolution).toMatchObject({
      decision: 'approved',
      reviewer: 'privacy-officer-3',
      receipt_action_key: res.body.review.action_key,
      via: 'callback',
      external_reference: { sys_id: '9d385017c611228701d22104cc95c371', number: 'SCTASK0010001' },
    });
    expect(await snapshot()).not.toContain('consent on file');

    // The receipt verifies like any other.
    const verify = await t.ctx.request('/v1/verify', { json: res.body.review.verify_request, key: t.key });
    expect(verify.body.verified).toBe(true);
  });

  it('refuses a wrong signature, a replayed request, and a decided action, changing nothing', async () => {
    const { dispatchKey } = await workflowSetup();
    const officer = await linkedReviewer('servicenow:acme', 'sys-user-3');
    const raw = JSON.stringify({ dispatch_key: dispatchKey, decision: 'rejected', reviewer: 'privacy-officer-3', platform_user: officer.platform_user });
    const before = await snapshot();
    const forged = await signedWorkflow(raw, WF_PATH(), 'not-the-callback-secret');
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('callback_signature_invalid');
    const unsigned = await t.ctx.request(WF_PATH(), { method: 'POST', raw, headers: { 'content-type': 'application/json' } });
    expect(unsigned.status).toBe(401);
    // The route secret_ref does not sign callbacks when a callback_secret_ref is set.
    expect((await signedWorkflow(raw, WF_PATH(), VALUES.ROUTING_TEST_TOKEN)).status).toBe(401);
    expect(await snapshot()).toBe(before);

    expect((await signedWorkflow(raw)).status).toBe(201);
    const after = await snapshot();
    const replay = await signedWorkflow(raw);
    expect(replay.status).toBe(409);
    expect(replay.body.code).toBe('callback_replayed');
    const again = await signedWorkflow(JSON.stringify({ dispatch_key: dispatchKey, decision: 'approved', reviewer: 'someone-else', platform_user: officer.platform_user }));
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('review_not_pending');
    expect(await snapshot()).toBe(after);
  });

  it("refuses another tenant's action, and another route's, with nothing changed", async () => {
    const { gate } = await workflowSetup();
    // A second tenant on the same service with its own paused action.
    const other = await t.ctx.signup();
    const foreign = await t.ctx.request('/v1/gate', { json: { pack: 'medicine', proposed_action: 'x', action_type: 'phi-export', context: { care_setting: 'outpatient', tool_id: 'ambient-scribe', phi_involved: false, tool_baa_status: 'baa-signed' } }, key: other.apiKey });
    expect(foreign.body.decision).toBe('needs_review');
    const law = await pauseLaw(t); // this tenant's action on its browser route
    const before = await snapshot();

    // Signed with this tenant's secret, naming the other tenant's action: not found here.
    const cross = await signedWorkflow(JSON.stringify({ action_key: foreign.body.action_key, decision: 'approved', reviewer: 'intruder' }));
    expect(cross.status).toBe(404);
    // This tenant's secret on the other tenant's path: the other tenant has no such route.
    const path = `/integrations/callbacks/${other.tenantId}/workflow/privacy-office/review-decision`;
    const otherPath = await signedWorkflow(JSON.stringify({ action_key: foreign.body.action_key, decision: 'approved', reviewer: 'intruder' }), path);
    expect(otherPath.status).toBe(401);
    // An action of this tenant routed elsewhere (browser) is not this route's to decide.
    const elsewhere = await signedWorkflow(JSON.stringify({ action_key: law.action_key, decision: 'approved', reviewer: 'intruder' }));
    expect(elsewhere.status).toBe(404);
    expect(await snapshot()).toBe(before);
    const items = await t.ctx.sql('SELECT status FROM review_items WHERE action_key IN (?, ?, ?)', foreign.body.action_key, gate.action_key, law.action_key);
    expect(items).toEqual([{ status: 'pending' }, { status: 'pending' }, { status: 'pending' }]);
  });

  it('applies the review rules: a law mirror tuple must be the published one', async () => {
    t = await routedTenant();
    await putRoute(t, 'workflow', 'legal', { enabled: true, config: { url: 'https://flow.example.com/x' }, secret_ref: SECRETS.token });
    await lawRoutesPolicy(t, { 'proposed-action': 'workflow:legal' });
    const gate = await pauseLaw(t);
    const attorney = await linkedReviewer('servicenow:flow-example', 'sys-user-1');
    const path = `/integrations/callbacks/${t.tenantId}/workflow/legal/review-decision`;
    const grades = { citation_support: 'PASS', privilege_boundary: 'PASS', supervision_route: 'PASS', client_confidentiality: 'PASS', filing_readiness: 'NA' };
    const bad = await signedWorkflow(JSON.stringify({ action_key: gate.action_key, decision: 'approved', reviewer: 'attorney-1', mirror_grades: grades, mirror_version: 'law-mirror/0', mirror_digest: MIRROR_DIGEST }), path, VALUES.ROUTING_TEST_TOKEN);
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.path)).toEqual(['/mirror_version']);
    const good = await signedWorkflow(
      JSON.stringify({ action_key: gate.action_key, decision: 'approved', reviewer: 'attorney-1', mirror_grades: grades, mirror_version: MIRROR_VERSION, mirror_digest: MIRROR_DIGEST, platform_user: attorney.platform_user }),
      path,
      VALUES.ROUTING_TEST_TOKEN,
    );
    expect(good.status, good.text).toBe(201);
    expect(good.body.review.mirror_seal).toMatchObject({ mirror_version: MIRROR_VERSION, principal: { principal_id: attorney.id }, asserted_by: { route: 'workflow:legal' } });
    expect((await t.ctx.request('/law/grading-mirror/verify', { json: good.body.review.mirror_seal })).body.verified).toBe(true);
  });
});

describe('chat callbacks (Slack v0 signed requests)', () => {
  it("Slack's documented example vector verifies, and its negative cases do not", () => {
    const base = { signingSecret: VECTOR.signing_secret, timestamp: VECTOR.timestamp, signature: VECTOR.expected_signature, now: Number(VECTOR.timestamp) };
    expect(verifyChatSignature({ ...base, body: new TextEncoder().encode(VECTOR.body) })).toEqual({ ok: true });
    expect(slackSig(VECTOR.signing_secret, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.expected_signature);
    const [tampered, stale] = VECTOR.negative_cases;
    expect(verifyChatSignature({ ...base, body: new TextEncoder().encode(VECTOR.body + tampered.body_suffix) })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyChatSignature({ ...base, now: stale.now, body: new TextEncoder().encode(VECTOR.body) })).toEqual({ ok: false, reason: 'stale' });
  });

  it('the endpoint accepts the example vector signature at its own time and refuses it five minutes later', async () => {
    t = await routedTenant();
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C1', signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    const path = `/integrations/callbacks/${t.tenantId}/chat/legal-desk/open-review-modal`;
    const headers = { 'content-type': 'application/x-www-form-urlencoded', ...VECTOR.headers };
    t.ctx.clock.set(Number(VECTOR.timestamp) * 1000 + 301_000);
    const stale = await t.ctx.request(path, { method: 'POST', raw: VECTOR.body, headers });
    expect(stale.status).toBe(401);
    expect(stale.body.code).toBe('callback_stale');
    t.ctx.clock.set(Number(VECTOR.timestamp) * 1000);
    const tampered = await t.ctx.request(path, { method: 'POST', raw: `${VECTOR.body}------`, headers });
    expect(tampered.body.code).toBe('callback_signature_invalid');
    // The signature passes; a slash command is not the block action this endpoint serves.
    const accepted = await t.ctx.request(path, { method: 'POST', raw: VECTOR.body, headers });
    expect(accepted.status).toBe(422);
    expect(accepted.body.code).toBe('validation_failed');
  });

  async function chatSetup() {
    t = await routedTenant();
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C0123456789', signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    await lawRoutesPolicy(t, { 'proposed-action': 'chat:legal-desk' });
    const gate = await pauseLaw(t);
    const [d] = (await t.ctx.request('/routing/outbox', { key: t.key })).body.dispatches;
    return { gate, dispatch: d };
  }

  function blockActionForm(dispatchKey: string, actionId = 'open-law-mirror-review') {
    const payload = {
      type: 'block_actions',
      user: { id: 'U2CERLKJA', username: 'roadrunner', team_id: 'T1DC2JH3J' },
      api_app_id: 'A0123456789',
      token: 'verification-token-unused',
      container: { type: 'message', message_ts: '1548261231.000200', channel_id: 'C0123456789', is_ephemeral: false },
      trigger_id: '398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
      team: { id: 'T1DC2JH3J', domain: 'testteamnow' },
      channel: { id: 'C0123456789', name: 'legal-desk' },
      actions: [{ action_id: actionId, block_id: 'review', text: { type: 'plain_text', text: 'Open review', emoji: false }, value: dispatchKey, type: 'button', action_ts: '1548426417.840180' }],
    };
    return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  }

  it('open-review-modal answers the views.open envelope with the prepared modal, no token, from the exact form body', async () => {
    const { gate, dispatch } = await chatSetup();
    const raw = blockActionForm(dispatch.dispatch_key);
    const ts = nowSeconds(t.ctx);
    const path = `/integrations/callbacks/${t.tenantId}/chat/legal-desk/open-review-modal`;
    const res = await t.ctx.request(path, { method: 'POST', raw, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSig(VALUES.ROUTING_TEST_SLACK_SIGNING, ts, raw) } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ method: 'views.open', bot_token_included: false, raw_content_stored: false, body: { trigger_id: '398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c' } });
    expect(res.body.body.view).toEqual(dispatch.payload.chat.modal_view);
    expect(JSON.parse(res.body.body.view.private_metadata)).toMatchObject({ action_key: gate.action_key, dispatch_key: dispatch.dispatch_key });
    expect(res.text).not.toMatch(/xox[bp]-/);

    const wrongAction = blockActionForm(dispatch.dispatch_key, 'something-else');
    const bad = await t.ctx.request(path, { method: 'POST', raw: wrongAction, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSig(VALUES.ROUTING_TEST_SLACK_SIGNING, ts, wrongAction) } });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('callback_not_understood');
  });

  it('a v0-signed review decision is sealed; a stale one is refused with nothing changed', async () => {
    const { gate, dispatch } = await chatSetup();
    const partner = await linkedReviewer('slack:T1DC2JH3J', 'U2CERLKJA');
    const path = `/integrations/callbacks/${t.tenantId}/chat/legal-desk/review-decision`;
    const raw = JSON.stringify({ dispatch_key: dispatch.dispatch_key, decision: 'escalated', reviewer: 'U2CERLKJA', external_reference: { view_id: 'V0123', team_id: 'T1DC2JH3J' }, platform_user: partner.platform_user });
    const old = nowSeconds(t.ctx) - 301;
    const before = await snapshot();
    const stale = await t.ctx.request(path, { method: 'POST', raw, headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(old), 'x-slack-signature': slackSig(VALUES.ROUTING_TEST_SLACK_SIGNING, old, raw) } });
    expect(stale.status).toBe(401);
    expect(stale.body.code).toBe('callback_stale');
    expect(await snapshot()).toBe(before);

    const ts = nowSeconds(t.ctx);
    const res = await t.ctx.request(path, { method: 'POST', raw, headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSig(VALUES.ROUTING_TEST_SLACK_SIGNING, ts, raw) } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.review).toMatchObject({ reviewed_action_key: gate.action_key, review_status: 'escalated', principal: { principal_id: partner.id } });
    const [d] = (await t.ctx.request('/routing/outbox', { key: t.key })).body.dispatches;
    expect(d.resolution).toMatchObject({ decision: 'escalated', via: 'callback', external_reference: { view_id: 'V0123' } });

    // A later decision through POST /v1/reviews replaces the escalation on the dispatch.
    const approved = await t.ctx.request('/v1/reviews', { json: { pack: 'law', action_key: gate.action_key, reviewer: 'attorney-2', decision: 'approved' }, key: t.key });
    expect(approved.status).toBe(201);
    const [after] = (await t.ctx.request('/routing/outbox', { key: t.key })).body.dispatches;
    expect(after.resolution).toMatchObject({ decision: 'approved', via: 'review_api', external_reference: null });
  });
});

describe('configuration', () => {
  it('SVC_PUBLIC_BASE_URL must be an origin; unset, callbacks point at this service on loopback', async () => {
    await expect(createTestContext({ env: { SVC_PUBLIC_BASE_URL: 'https://gate.example.com/path?x=1' } })).rejects.toThrow(/SVC_PUBLIC_BASE_URL/);
    const ctx = await createTestContext({ env: { PORT: '8788' } });
    try {
      expect(ctx.config.publicBaseUrl).toBe('http://127.0.0.1:8788');
    } finally {
      await ctx.close();
    }
    t = await routedTenant();
  });
});
