/**
 * Route integrations and dispatch, end to end in process: the real app and SQLite file, the
 * real send worker driven tick by tick, and a loopback stand-in for the workflow and chat
 * platforms (interface-spec "Other route integrations", "Route dispatch (outbox item)",
 * States and transitions "Route dispatch …"). Signatures are re-computed here with node:crypto.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModalView } from '@slack/types';
import { MIRROR_DIGEST, MIRROR_VERSION } from '../../companion/reviews/mirror.ts';
import { runReviewSchedule } from '../../companion/reviews/schedule.ts';
import { SECRETS, VALUES, lawRoutesPolicy, pauseLaw, pauseMedicineExport, putRoute, routedTenant, sha256Sig, startStandIn } from './routing-fixtures.ts';
import type { RoutedTenant, StandIn } from './routing-fixtures.ts';

let t: RoutedTenant;
let platform: StandIn | undefined;
afterEach(async () => {
  expect(t.ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
  await t.ctx.close();
  await platform?.close();
  platform = undefined;
});

const outbox = (query = '') => t.ctx.request(`/routing/outbox${query}`, { key: t.key });
const dispatchRows = () => t.ctx.sql<{ id: string; status: string }>('SELECT * FROM route_dispatches ORDER BY id');
async function drain(): Promise<number> {
  let claimed = 0;
  for (let i = 0; i < 20; i++) {
    const n = (await t.ctx.deps.routing.worker.tick()).claimed;
    if (n === 0) return claimed;
    claimed += n;
  }
  throw new Error('the route queue did not drain');
}

describe('PUT /tenant/integrations/{chat|workflow}/{target}', () => {
  it('answers a bad setup with 422 naming every failing field and leaves the target unchanged', async () => {
    t = await routedTenant();
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C0123456789', callback_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    const before = await t.ctx.sql('SELECT * FROM tenant_integrations ORDER BY channel, target');
    const cases: [string, unknown, string[]][] = [
      ['chat', { enabled: true, config: {} }, ['/config/channel_id', '/secret_ref']],
      ['chat', { enabled: true, config: { channel_id: 'C1', signing_secret_ref: 'xoxb-raw-token-material' }, secret_ref: SECRETS.token }, ['/config/signing_secret_ref']],
      ['chat', { enabled: true, config: { channel_id: 'C1' }, secret_ref: 'env://NOT_GRANTED' }, ['/secret_ref']],
      ['workflow', { enabled: true, config: { auth_type: 'hmac' } }, ['/config/url', '/secret_ref']],
      ['workflow', { enabled: true, config: { url: 'http://10.0.0.5/flow' }, secret_ref: SECRETS.token }, ['/config/url']],
      ['workflow', { enabled: true, config: { url: 'https://a.example.com/', trigger_url: 'https://b.example.com/', callback_secret_ref: 'raw' }, secret_ref: SECRETS.token }, ['/config/trigger_url', '/config/callback_secret_ref']],
      ['workflow', { enabled: true, config: { channel_id: 'C1' }, secret_ref: SECRETS.token }, ['/config/channel_id']],
    ];
    for (const [channel, body, paths] of cases) {
      const target = channel === 'chat' ? 'legal-desk' : 'privacy-office';
      const res = await t.ctx.request(`/tenant/integrations/${channel}/${target}`, { method: 'PUT', json: body, key: t.key });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body.errors.map((e: { path: string }) => e.path).sort(), JSON.stringify(body)).toEqual(paths.sort());
      expect(res.text).not.toContain('xoxb-raw-token-material');
    }
    expect(await t.ctx.sql('SELECT * FROM tenant_integrations ORDER BY channel, target')).toEqual(before);
  });

  it('reports readiness: disabled, incomplete, waiting on secret resolution, ready for an explicit operator send; never a value', async () => {
    t = await routedTenant();
    await putRoute(t, 'chat', 'off', { enabled: false, config: {} });
    await putRoute(t, 'chat', 'no-callback', { enabled: true, config: { channel_id: 'C1' }, secret_ref: SECRETS.token });
    await putRoute(t, 'workflow', 'waiting', { enabled: true, config: { url: 'https://flow.example.com/api' }, secret_ref: SECRETS.callback });
    await putRoute(t, 'workflow', 'ready', { enabled: true, config: { url: 'https://flow.example.com/api', callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
    const saved = process.env.ROUTING_TEST_CALLBACK;
    delete process.env.ROUTING_TEST_CALLBACK;
    try {
      const res = await t.ctx.request('/tenant/integrations/readiness', { key: t.key });
      expect(res.status).toBe(200);
      const by = Object.fromEntries(res.body.integrations.map((i: any) => [`${i.channel}:${i.target}`, i.readiness]));
      expect(by['chat:off'].state).toBe('disabled');
      expect(by['chat:no-callback']).toMatchObject({ state: 'incomplete', missing: ['config.callback_secret_ref'] });
      expect(by['workflow:waiting']).toMatchObject({ state: 'waiting_on_secret', secrets: { secret_ref: { provider: 'env', resolvable: false, error: 'not_found' } } });
      expect(by['workflow:ready']).toMatchObject({ state: 'waiting_on_secret' });
      process.env.ROUTING_TEST_CALLBACK = saved;
      const again = await t.ctx.request('/tenant/integrations/readiness', { key: t.key });
      const ready = again.body.integrations.find((i: any) => i.target === 'ready').readiness;
      expect(ready).toMatchObject({ state: 'ready', external_send: false, secrets: { secret_ref: { provider: 'env', resolvable: true } } });
      expect(ready.detail).toContain('explicit operator send');
      for (const v of Object.values(VALUES)) expect(again.text).not.toContain(v);
    } finally {
      process.env.ROUTING_TEST_CALLBACK = saved;
    }
  });
});

describe('route dispatch on needs_review', () => {
  it('writes the outbox item in the seal with the full raw-safe payload and the workflow platform shapes', async () => {
    t = await routedTenant();
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: 'https://acme.service-now.com/api/x_acme/review', auth_type: 'hmac' }, secret_ref: SECRETS.token });
    const gate = await pauseMedicineExport(t);
    const res = await outbox();
    expect(res.status).toBe(200);
    expect(res.body.external_send).toBe(false);
    const [d] = res.body.dispatches;
    expect(d).toMatchObject({ action_key: gate.action_key, channel: 'workflow', target: 'privacy-office', status: 'pending', attempt_count: 0, resolution: null });
    const p = d.payload;
    const callbackPath = `/integrations/callbacks/${t.tenantId}/workflow/privacy-office/review-decision`;
    expect(p).toMatchObject({
      event: 'route.dispatch_ready',
      tenant: t.tenantId,
      dispatch_key: d.dispatch_key,
      action_key: gate.action_key,
      decision: 'needs_review',
      action_type: 'phi-export',
      review_route: 'workflow:privacy-office',
      evidence_packet_href: gate.evidence_packet.href,
      review_page_url: `https://gate.example.com/console#/reviews/${gate.action_key}`,
      next_step: gate.next_step,
      raw_content_stored: false,
      review_controls: { callback: { method: 'POST', path: callbackPath, url: `https://gate.example.com${callbackPath}`, signature_header: 'X-Service-Signature' } },
      active_manifest_item: { dispatch_key: d.dispatch_key, action_key: gate.action_key, target: 'privacy-office', raw_content_stored: false },
    });
    expect(p.review_controls.fields.map((f: any) => f.name)).toEqual(expect.arrayContaining(['dispatch_key', 'decision', 'reviewer', 'reason', 'external_reference']));
    expect(p.workflow.flow_trigger).toMatchObject({ request_body_type: 'application/json' });
    expect(p.workflow.flow_trigger.request_body_data_pills.map((x: any) => x.name)).toContain('dispatch_key');
    expect(p.workflow.task_fields).toMatchObject({ table: 'sc_task', correlation_id: d.dispatch_key, callback_path: callbackPath, raw_content_stored: false });
    expect(p.workflow.review_variables[0]).toMatchObject({ name: 'u_review_decision', type: 'choice', choices: ['approved', 'rejected', 'escalated'], callback_field: 'decision' });
    expect(p.workflow.outbound_callback_rest_step).toMatchObject({ method: 'POST', path: callbackPath, raw_content_required: false });
    expect(JSON.stringify(p)).not.toContain('Draft the next step'); // the proposed text
  });

  it('writes nothing for a disabled route, a browser route or a route with no integration', async () => {
    t = await routedTenant();
    await putRoute(t, 'workflow', 'privacy-office', { enabled: false, config: {} });
    await pauseMedicineExport(t);
    await pauseLaw(t); // browser:supervising-attorney
    expect(await dispatchRows()).toEqual([]);
  });

  it('deliver and process prepare payloads and post nothing: the stand-in sees zero connections without the external-send flag', async () => {
    platform = await startStandIn();
    t = await routedTenant();
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: platform.url }, secret_ref: SECRETS.token });
    await t.ctx.deps.lifecycle.start();
    const a = await pauseMedicineExport(t);
    await pauseMedicineExport(t);
    const [second, first] = (await outbox()).body.dispatches;
    expect(first.action_key).toBe(a.action_key);

    const delivered = await t.ctx.request(`/routing/outbox/${first.dispatch_key}/deliver`, { method: 'POST', key: t.key });
    expect(delivered.status).toBe(200);
    expect(delivered.body).toMatchObject({ dispatch_key: first.dispatch_key, status: 'prepared', attempt_count: 0 });
    const run = await t.ctx.request('/routing/outbox/process', { method: 'POST', key: t.key });
    expect(run.body).toEqual({ prepared: [second.dispatch_key], remaining: false, external_send: false, worker: 'off' });
    expect((await outbox()).body.dispatches.map((d: any) => d.status)).toEqual(['prepared', 'prepared']);

    // The send worker is not even running; and its attempt refuses to post without the flag.
    expect(t.ctx.deps.workers.status().map((w) => w.name)).not.toContain('route-outbox');
    await t.ctx.deps.routing.worker.tick();
    expect(platform.requests).toEqual([]);
    expect(platform.connections).toBe(0);
    expect((await t.ctx.request('/routing/outbox/nope/deliver', { method: 'POST', key: t.key })).status).toBe(422);
    expect((await t.ctx.request(`/routing/outbox/dsp_${'0'.repeat(26)}/deliver`, { method: 'POST', key: t.key })).status).toBe(404);
  });

  it('with the flag, the worker posts exactly one request per dispatch, bearer by default, hmac-signed when asked', async () => {
    platform = await startStandIn();
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: platform.url }, secret_ref: SECRETS.token });
    await pauseMedicineExport(t);
    await pauseMedicineExport(t);
    expect(await drain()).toBe(2);
    expect(platform.requests).toHaveLength(2);
    expect(platform.connections).toBeLessThanOrEqual(2);
    for (const r of platform.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${VALUES.ROUTING_TEST_TOKEN}`);
      expect(r.headers['x-service-signature']).toBeUndefined();
      expect(JSON.parse(r.raw.toString()).event).toBe('route.dispatch_ready');
    }
    expect((await outbox()).body.dispatches.map((d: any) => d.status)).toEqual(['sent', 'sent']);
    expect(await drain()).toBe(0); // sent is final: nothing posted twice

    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: platform.url, auth_type: 'hmac' }, secret_ref: SECRETS.token });
    await pauseMedicineExport(t);
    expect(await drain()).toBe(1);
    const signed = platform.requests[2]!;
    expect(signed.headers.authorization).toBeUndefined();
    expect(signed.headers['x-service-signature']).toBe(sha256Sig(VALUES.ROUTING_TEST_TOKEN, signed.raw));
    const ticks = await t.ctx.request('/routing/outbox/ticks', { key: t.key });
    expect(ticks.body.ticks[0]).toMatchObject({ claimed: 1, succeeded: 1 });
  });

  it('a dispatch whose review is already decided is resolved and never sent', async () => {
    platform = await startStandIn();
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: platform.url }, secret_ref: SECRETS.token });
    const gate = await pauseMedicineExport(t);
    const review = await t.ctx.request('/v1/reviews', { json: { pack: 'medicine', action_key: gate.action_key, reviewer: 'privacy-officer-3', decision: 'rejected' }, key: t.key });
    expect(review.status).toBe(201);
    expect(await drain()).toBe(0);
    expect(platform.connections).toBe(0);
    const [d] = (await outbox()).body.dispatches;
    expect(d).toMatchObject({ status: 'pending', resolution: { decision: 'rejected', reviewer: 'privacy-officer-3', receipt_action_key: review.body.action_key, via: 'review_api', external_reference: null } });
  });

  it('retries a failing platform with backoff, dead-letters it, and requeues the dead letter', async () => {
    platform = await startStandIn(() => ({ status: 503 }));
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: platform.url }, secret_ref: SECRETS.token });
    await pauseMedicineExport(t);
    const max = t.ctx.deps.routing.queue.schedule.maxAttempts;
    for (let i = 0; i < max; i++) {
      expect(await drain()).toBe(1);
      // To the jittered moment the retry plan chose (none after the last attempt).
      const next = (await outbox()).body.dispatches[0].next_attempt_at;
      if (next) t.ctx.clock.set(next);
    }
    expect(platform.requests).toHaveLength(max);
    const dead = await t.ctx.request('/routing/outbox/dead-letters', { key: t.key });
    expect(dead.body.dispatches).toHaveLength(1);
    expect(dead.body.dispatches[0]).toMatchObject({ status: 'failed', dead_lettered: true, attempt_count: max, last_error: 'HTTP 503' });
    const key = dead.body.dispatches[0].dispatch_key;
    const requeued = await t.ctx.request(`/routing/outbox/${key}/requeue`, { method: 'POST', key: t.key });
    expect(requeued.body).toMatchObject({ status: 'pending', dead_lettered: false, attempt_count: 0 });
    expect((await t.ctx.request(`/routing/outbox/${key}/requeue`, { method: 'POST', key: t.key })).body.code).toBe('dispatch_not_requeueable');
  });

  it("waits out a chat platform's rate limit for as long as its Retry-After asks, then sends", async () => {
    // Slack's Web API answers a rate-limited call HTTP 429 with Retry-After in seconds ("Rate limits").
    let limited = true;
    platform = await startStandIn(() => (limited ? { status: 429, headers: { 'retry-after': '120' }, body: '{"ok":false,"error":"ratelimited"}' } : { status: 200, body: '{"ok":true}' }));
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C0123456789', url: platform.url, signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    await lawRoutesPolicy(t, { 'proposed-action': 'chat:legal-desk' });
    await pauseLaw(t);
    expect(await drain()).toBe(1);
    const [d] = (await outbox()).body.dispatches;
    expect(d).toMatchObject({ status: 'failed', attempt_count: 1, last_error: 'HTTP 429, retry after 120 s' });
    expect(Date.parse(d.next_attempt_at) - t.ctx.clock.now().getTime()).toBe(120_000);
    // Not before the two minutes are up.
    t.ctx.clock.advance(119_000);
    expect(await drain()).toBe(0);
    limited = false;
    t.ctx.clock.advance(1_000);
    expect(await drain()).toBe(1);
    expect((await outbox()).body.dispatches[0]).toMatchObject({ status: 'sent', attempt_count: 2 });
    expect(platform.requests).toHaveLength(2);
  });

  it('the webhook channel carries review dispatches signed sha256=<hmac(body)> with the target signing key', async () => {
    platform = await startStandIn(() => ({ status: 200 }));
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
    const hook = await putRoute(t, 'webhook', 'ops', { enabled: true, config: { url: platform.url, events: [] } });
    const { createHash } = await import('node:crypto');
    const derived = createHash('sha256').update(`service-webhook-signing:${hook.body.signing_secret}`).digest('hex');
    await lawRoutesPolicy(t, { 'legal-research-memo': 'webhook:ops' });
    await pauseLaw(t, 'legal-research-memo');
    expect(await drain()).toBe(1);
    const [r] = platform.requests;
    expect(r!.headers['x-service-signature']).toBe(sha256Sig(derived, r!.raw));
    expect(String(r!.headers['x-service-signature'])).not.toMatch(/^t=/);
  });

  it('a chat dispatch carries a Block Kit modal typed against @slack/types, whose metadata holds only keys and the mirror tuple', async () => {
    platform = await startStandIn(() => ({ status: 200, body: '{"ok":true}' }));
    t = await routedTenant({ SVC_OUTBOX_EXTERNAL_SEND: '1' });
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C0123456789', url: platform.url, signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    await lawRoutesPolicy(t, { 'proposed-action': 'chat:legal-desk' });
    const gate = await pauseLaw(t);
    const [d] = (await outbox()).body.dispatches;
    const view: ModalView = d.payload.chat.modal_view;
    expect(view).toMatchObject({ type: 'modal', callback_id: 'action-gate-review', title: { type: 'plain_text' }, submit: { type: 'plain_text' } });
    expect(view.title.text.length).toBeLessThanOrEqual(24);
    expect(JSON.parse(view.private_metadata!)).toEqual({ action_key: gate.action_key, dispatch_key: d.dispatch_key, mirror_version: MIRROR_VERSION, mirror_digest: MIRROR_DIGEST });
    expect(view.blocks.map((b) => b.block_id)).toEqual(expect.arrayContaining(['decision', 'reviewer', 'reason', 'mirror_grades.citation_support']));
    expect(d.payload.chat.actions.map((a: any) => a.decision)).toEqual(['approved', 'rejected', 'escalated']);
    expect(d.payload).toMatchObject({ channel: 'C0123456789', text: expect.any(String) });
    expect(d.payload.chat.review_callback_contract).toMatchObject({ signature_header: 'X-Slack-Signature', timestamp_header: 'X-Slack-Request-Timestamp', replay_window_seconds: 300 });

    expect(await drain()).toBe(1);
    expect(platform.requests[0]!.headers.authorization).toBe(`Bearer ${VALUES.ROUTING_TEST_TOKEN}`);
  });

  it('docs-package and provider-walkthrough carry the real callback URLs of this tenant and target', async () => {
    t = await routedTenant();
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: 'https://acme.service-now.com/api/x/flow', auth_type: 'hmac', callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C1', signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    const pkg = await t.ctx.request('/tenant/integrations/docs-package', { key: t.key, headers: { host: 'evil.example.net' } });
    expect(pkg.status).toBe(200);
    const wf = pkg.body.routes.find((r: any) => r.channel === 'workflow');
    expect(wf.callbacks.review_decision.url).toBe(`https://gate.example.com/integrations/callbacks/${t.tenantId}/workflow/privacy-office/review-decision`);
    expect(wf.secrets).toEqual({ secret_ref: SECRETS.token, callback_secret_ref: SECRETS.callback });
    expect(wf.outbound.headers).toContain('X-Service-Signature: sha256=<hex HMAC-SHA256 of the body>');
    const chat = pkg.body.routes.find((r: any) => r.channel === 'chat');
    expect(chat.callbacks.open_review_modal.url).toBe(`https://gate.example.com/integrations/callbacks/${t.tenantId}/chat/legal-desk/open-review-modal`);
    expect(pkg.text).not.toContain('evil.example.net');
    for (const v of Object.values(VALUES)) expect(pkg.text).not.toContain(v);
    const walk = await t.ctx.request('/tenant/integrations/provider-walkthrough', { key: t.key });
    expect(walk.body.routes.find((r: any) => r.channel === 'workflow').steps.join('\n')).toContain(wf.callbacks.review_decision.url);
  });
});

describe('escalation chains reach the next route', () => {
  it('an escalation step moves the dispatch, under the same dispatch_key, to the step’s route, pending again', async () => {
    t = await routedTenant();
    const flow = { enabled: true, config: { url: 'https://flow.example.com/api' }, secret_ref: SECRETS.token };
    await putRoute(t, 'workflow', 'legal-desk', flow);
    await putRoute(t, 'workflow', 'general-counsel', flow);
    const policy = await t.ctx.request('/tenant/policy?policy_pack=law', {
      method: 'PUT',
      key: t.key,
      json: {
        review_action_types: ['proposed-action'],
        review_routes: { 'proposed-action': 'workflow:legal-desk' },
        review_rules: { 'proposed-action': { approvals_required: 1, escalation: [{ after_seconds: 3600, route: 'workflow:general-counsel' }] } },
      },
    });
    expect(policy.status, policy.text).toBe(201);
    const paused = await pauseLaw(t);
    const [before] = (await dispatchRows()) as unknown as { id: string; target: string; body: string }[];
    expect(before).toMatchObject({ target: 'legal-desk', status: 'pending' });
    expect(await t.ctx.request(`/routing/outbox/${before!.id}/deliver`, { method: 'POST', key: t.key })).toMatchObject({ status: 200 });

    const round = () => runReviewSchedule({ ...t.ctx.deps, onEscalated: t.ctx.deps.routing.onEscalated });
    t.ctx.clock.advance(3600 * 1000 - 1);
    expect(await round()).toBe(0);
    expect(await dispatchRows()).toEqual([expect.objectContaining({ id: before!.id, target: 'legal-desk' })]);
    t.ctx.clock.advance(1);
    expect(await round()).toBe(1);

    const after = (await dispatchRows()) as unknown as { id: string; target: string; status: string; prepared_at: string | null; attempt_count: number; body: string }[];
    expect(after).toEqual([expect.objectContaining({ id: before!.id, target: 'general-counsel', status: 'pending', prepared_at: null, attempt_count: 0 })]);
    const body = JSON.parse(after[0]!.body);
    expect(body).toMatchObject({ dispatch_key: before!.id, action_key: paused.action_key, review_route: 'workflow:general-counsel', raw_content_stored: false });

    // Once a reviewer decides, a later step changes nothing.
    const decided = await t.ctx.request('/v1/reviews', { json: { action_key: paused.action_key, pack: 'law', decision: 'approved', reviewer: 'gc@example.com' }, key: t.key });
    expect(decided.status, decided.text).toBe(201);
    expect(await t.ctx.deps.store.routing.retarget({ id: before!.id, tenantId: t.tenantId, actionKey: paused.action_key, channel: 'workflow', target: 'legal-desk', body: '{}', runAt: 0, createdAt: 'x' })).toBe(false);
  });
});
