/**
 * The reviewer is the authenticated principal (companion/reviews/reviewer.ts): every review
 * receipt seals the principal behind the credential; naming anyone else is delegation, for a
 * principal holding reviews:delegate only; N-of-M rules count distinct people under any
 * spelling of `reviewer`; signed route callbacks decide as the person their platform user is
 * linked to (companion/account/identities.ts), or seal nothing. In-process against a real
 * database (SQLite, or PostgreSQL in the api-on-postgres project), the real keys and sealer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { MIRROR_DIGEST, MIRROR_VERSION } from '../../companion/reviews/mirror.ts';
import { signIn } from './account-helpers.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';
import { SECRETS, VALUES, lawRoutesPolicy, nowSeconds, pauseLaw, putRoute, routedTenant, sha256Sig, slackSig } from './routing-fixtures.ts';

let ctx: TestContext;
let key: string;
afterEach(() => ctx?.close());

const FOUR_EYES = { review_rules: { 'proposed-action': { approvals_required: 2 } } };
const receiptCount = async () => (await ctx.sql<{ n: number }>("SELECT count(*) AS n FROM sealed_records WHERE kind = 'review'"))[0]!.n;
const review = (json: Record<string, unknown>, k: string) => ctx.request('/v1/reviews', { json, key: k });

async function pause(k = key): Promise<string> {
  const res = await ctx.request('/v1/gate', { json: gateBody('law'), key: k });
  expect(res.body.decision).toBe('needs_review');
  return res.body.action_key as string;
}

async function fourEyes() {
  const res = await ctx.request('/tenant/policy?policy_pack=law', { method: 'PUT', json: FOUR_EYES, key });
  expect(res.status, res.text).toBe(201);
}

let people = 0;
/** A person of the tenant with exactly the defaults plus `capabilities`, and their own key. */
async function person(name: string, capabilities: string[] = ['reviews:decide']) {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${++people}@example.com`;
  const res = await ctx.request('/account/people', { json: { email, display_name: name, capabilities }, key });
  expect(res.status, res.text).toBe(201);
  const id = res.body.person.id as string;
  const personKey = res.body.api_key as string;
  return {
    id,
    email,
    name,
    key: personKey,
    review: (actionKey: string, extra: Record<string, unknown> = {}) => review({ pack: 'law', action_key: actionKey, decision: 'approved', ...extra }, personKey),
  };
}

/** A service account holding `capabilities` (beyond the defaults), and a key of its own. */
async function serviceAccount(name: string, capabilities: string[]) {
  const created = await ctx.request('/account/service-accounts', { json: { name, capabilities }, key });
  expect(created.status, created.text).toBe(201);
  const id = created.body.service_account.id as string;
  const minted = await ctx.request('/account/api-keys', { json: { principal_id: id }, key });
  expect(minted.status, minted.text).toBe(201);
  const saKey = minted.body.api_key as string;
  return { id, key: saKey, review: (actionKey: string, extra: Record<string, unknown> = {}) => review({ pack: 'law', action_key: actionKey, decision: 'approved', ...extra }, saKey) };
}

describe('one person, one approval, under any spelling of reviewer', () => {
  it('refuses a second approval by the same person as id, email in another case, display name, or by naming someone else; two people release', async () => {
    ({ ctx, key } = await freshTenantContext());
    await fourEyes();
    const [alice, bob] = [await person('Alice Example'), await person('Bob Example')];
    const action = await pause();

    const first = await alice.review(action);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ review_status: 'pending', approvals: 1, reviewer: alice.id, principal: { principal_id: alice.id, kind: 'person', display_name: 'Alice Example' }, asserted_by: null });
    const sealed = await receiptCount();

    for (const spelling of [alice.id, alice.email, alice.email.toUpperCase()]) {
      const again = await alice.review(action, { reviewer: spelling });
      expect(again.status, spelling).toBe(409);
      expect(again.body.code, spelling).toBe('review_duplicate_approver');
    }
    // Her display name is not her id or email: naming it is delegation, which she may not do.
    const byName = await alice.review(action, { reviewer: 'Alice Example' });
    expect(byName.status).toBe(422);
    expect(byName.body).toMatchObject({ code: 'reviewer_not_authenticated_principal', errors: [expect.objectContaining({ path: '/reviewer', code: 'reviewer_not_authenticated_principal' })] });
    // The owner holds reviews:delegate, but once the owner approved, naming someone else is still the owner's second approval.
    const ownerFirst = await pause();
    expect((await review({ pack: 'law', action_key: ownerFirst, decision: 'approved' }, key)).body).toMatchObject({ review_status: 'pending', approvals: 1 });
    const ownerAgain = await review({ pack: 'law', action_key: ownerFirst, decision: 'approved', reviewer: bob.email }, key);
    expect(ownerAgain.status).toBe(409);
    expect(ownerAgain.body.code).toBe('review_duplicate_approver');
    expect(await receiptCount()).toBe(sealed + 1);
    expect((await ctx.request(`/v1/records/${action}`, { key })).body.review).toMatchObject({ status: 'pending', approvals: 1 });

    const second = await bob.review(action);
    expect(second.status, second.text).toBe(201);
    expect(second.body).toMatchObject({ review_status: 'approved', approvals: 2 });
    const attestation = second.body.evidence_packet.seal.attestation;
    expect(attestation.context.approval.prior_approvals).toEqual([{ action_key: first.body.action_key, reviewer: alice.id, counts_as: alice.id }]);
  });

  it('a person named by the owner counts as that person: not twice with their own approval', async () => {
    ({ ctx, key } = await freshTenantContext());
    await fourEyes();
    const alice = await person('Alice Example');
    const action = await pause();
    const asserted = await review({ pack: 'law', action_key: action, decision: 'approved', reviewer: alice.email.toUpperCase() }, key);
    expect(asserted.status, asserted.text).toBe(201);
    expect(asserted.body.principal).toMatchObject({ principal_id: alice.id, display_name: 'Alice Example' });
    expect(asserted.body.asserted_by).toMatchObject({ kind: 'person' });
    const own = await alice.review(action);
    expect(own.status).toBe(409);
    expect(own.body.code).toBe('review_duplicate_approver');
  });
});

describe('delegation by a service account', () => {
  it('an unmapped identity satisfies a one-approval rule, never a second pair of eyes; mapped, it counts as that person, once', async () => {
    ({ ctx, key } = await freshTenantContext());
    const intranet = await serviceAccount('Intranet approvals', ['reviews:decide', 'reviews:delegate']);
    const [alice, bob] = [await person('Alice Example'), await person('Bob Example')];

    // One approval: an identity the tenant does not know releases, recorded as asserted by the service account.
    const single = await pause();
    const one = await intranet.review(single, { reviewer: 'intranet-user-7' });
    expect(one.status, one.text).toBe(201);
    expect(one.body).toMatchObject({ review_status: 'approved', reviewer: 'intranet-user-7', principal: null, asserted_by: { principal_id: intranet.id, kind: 'service_account', display_name: 'Intranet approvals' } });
    expect(one.body.evidence_packet.seal.attestation.context).toMatchObject({ reviewer: 'intranet-user-7', principal: null, asserted_by: { principal_id: intranet.id } });

    await fourEyes();
    const action = await pause();
    const before = await receiptCount();
    const unmapped = await intranet.review(action, { reviewer: 'intranet-user-7' });
    expect(unmapped.status).toBe(409);
    expect(unmapped.body).toMatchObject({ code: 'review_approver_not_a_person', approvals: 0, approvals_required: 2 });
    // The service account as itself is not a person either.
    expect((await intranet.review(action)).body.code).toBe('review_approver_not_a_person');
    expect(await receiptCount()).toBe(before);

    const mapped = await intranet.review(action, { reviewer: alice.email });
    expect(mapped.status, mapped.text).toBe(201);
    expect(mapped.body).toMatchObject({ review_status: 'pending', principal: { principal_id: alice.id, kind: 'person' }, asserted_by: { principal_id: intranet.id } });
    // Not twice: not by her own key, nor named again by id.
    expect((await alice.review(action)).body.code).toBe('review_duplicate_approver');
    expect((await intranet.review(action, { reviewer: alice.id })).body.code).toBe('review_duplicate_approver');
    const board = (await ctx.request('/active-manifest', { key })).body.items.find((i: { action_key: string }) => i.action_key === action);
    expect(board.approved_by).toEqual([
      { receipt_action_key: mapped.body.action_key, at: expect.any(String), reviewer: alice.email, principal_id: alice.id, display_name: 'Alice Example', asserted_by: { principal_id: intranet.id, display_name: 'Intranet approvals', route: null } },
    ]);
    const released = await intranet.review(action, { reviewer: bob.id });
    expect(released.body).toMatchObject({ review_status: 'approved', approvals: 2 });
  });

  it('a delegated reviewer who is a person without reviews:decide, or deactivated, is refused with nothing sealed', async () => {
    ({ ctx, key } = await freshTenantContext());
    const intranet = await serviceAccount('Intranet approvals', ['reviews:decide', 'reviews:delegate']);
    const reader = await person('Reader', []);
    const action = await pause();
    const res = await intranet.review(action, { reviewer: reader.email });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'reviewer_not_authorised', errors: [expect.objectContaining({ path: '/reviewer' })] });
    const gone = await person('Former Partner');
    expect((await ctx.request(`/account/people/${gone.id}`, { method: 'PATCH', json: { status: 'deactivated' }, key })).status).toBe(200);
    expect((await intranet.review(action, { reviewer: gone.email })).body.code).toBe('reviewer_not_authorised');
    expect(await receiptCount()).toBe(0);
  });
});

describe('naming someone else without reviews:delegate', () => {
  it('answers 422 reviewer_not_authenticated_principal to a key and to a session alike, and seals nothing', async () => {
    ({ ctx, key } = await freshTenantContext());
    const alice = await person('Alice Example');
    const bob = await person('Bob Example');
    const decider = await serviceAccount('Decider', ['reviews:decide']);
    const action = await pause();
    const before = await receiptCount();
    const session = await signIn(ctx, alice.key);
    const attempts = [
      await alice.review(action, { reviewer: bob.id }),
      await alice.review(action, { reviewer: 'someone-else' }),
      await session.request('/v1/reviews', { json: { pack: 'law', action_key: action, decision: 'approved', reviewer: bob.email } }),
      await decider.review(action, { reviewer: alice.email }),
    ];
    for (const res of attempts) {
      expect(res.status, res.text).toBe(422);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.code).toBe('reviewer_not_authenticated_principal');
      expect(res.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/reviewer', code: 'reviewer_not_authenticated_principal' })]);
      // Errors repeat no caller input.
      expect(res.text).not.toContain(bob.email);
    }
    expect(await receiptCount()).toBe(before);
    expect((await ctx.request(`/v1/records/${action}`, { key })).body.review.status).toBe('pending');
  });
});

describe('the spec’s review request and response stay valid', () => {
  it('a person reviewing as themselves (reviewer = their id) and an owner’s key naming a reviewer both keep working, and each receipt verifies offline', async () => {
    ({ ctx, key } = await freshTenantContext());
    const alice = await person('Alice Example');
    const jwks = trustedKeySet((await ctx.request('/.well-known/service-keys.json')).body);

    const mine = await alice.review(await pause(), { reviewer: alice.id, reason: 'checked' });
    expect(mine.status, mine.text).toBe(201);
    expect(mine.body).toMatchObject({ decision: 'approved', review_status: 'approved', reviewer: alice.id, principal: { principal_id: alice.id, kind: 'person', display_name: 'Alice Example' }, asserted_by: null });
    const ownerNamed = await review({ pack: 'law', action_key: await pause(), decision: 'rejected', reviewer: 'supervising-attorney-3' }, key);
    expect(ownerNamed.status, ownerNamed.text).toBe(201);
    expect(ownerNamed.body).toMatchObject({ reviewer: 'supervising-attorney-3', review_status: 'rejected', principal: null, asserted_by: { kind: 'person' } });

    for (const r of [mine.body, ownerNamed.body]) {
      const context = r.evidence_packet.seal.attestation.context;
      expect(context.reviewer).toBe(r.reviewer);
      expect(context.principal ?? context.asserted_by.principal_id).toBeTruthy();
      expect(failedChecks(await verifyEvidence(r.verify_request, jwks))).toEqual([]);
      expect((await ctx.request('/v1/verify', { json: r.verify_request })).body).toMatchObject({ verified: true, failed_checks: [] });
      // The stored record view says who decided too.
      expect((await ctx.request(`/v1/records/${r.action_key}`, { key })).body).toMatchObject({ reviewer: r.reviewer, principal: r.principal });
    }
    expect(mine.body.evidence_packet.seal.attestation.context.principal.principal_id).toBe(alice.id);
  });

  it('the law mirror seal names who decided, and a seal naming someone else fails verification', async () => {
    ({ ctx, key } = await freshTenantContext());
    const alice = await person('Alice Example');
    const grades = { citation_support: 'PASS', privilege_boundary: 'PASS', supervision_route: 'PASS', client_confidentiality: 'PASS', filing_readiness: 'NA' };
    const res = await alice.review(await pause(), { mirror_grades: grades, mirror_version: MIRROR_VERSION, mirror_digest: MIRROR_DIGEST });
    expect(res.status, res.text).toBe(201);
    const seal = res.body.mirror_seal;
    expect(seal).toMatchObject({ principal: { principal_id: alice.id }, asserted_by: null });
    expect((await ctx.request('/law/grading-mirror/verify', { json: seal })).body).toMatchObject({ verified: true, failed_checks: [] });
    const forged = await ctx.request('/law/grading-mirror/verify', { json: { ...seal, principal: { ...seal.principal, principal_id: 'per_01JD3Q8Z5V7N4M2K6H8G0F1E2D' } } });
    expect(forged.body.verified).toBe(false);
    expect(forged.body.failed_checks).toEqual(['mirror_commitment']);
  });
});

describe('linked identities', () => {
  it('links, lists and unlinks behind people:manage, each change an admin receipt; one person per platform user', async () => {
    ({ ctx, key } = await freshTenantContext());
    const alice = await person('Alice Example');
    const bob = await person('Bob Example');
    const path = `/account/people/${alice.id}/identities`;
    const linked = await ctx.request(path, { json: { provider: 'slack:T0123ABCD', subject: 'U0123ABCD' }, key });
    expect(linked.status, linked.text).toBe(201);
    expect(linked.body.identity).toMatchObject({ person_id: alice.id, provider: 'slack:T0123ABCD', subject: 'U0123ABCD' });
    expect((await ctx.request(path, { key })).body.identities).toEqual([linked.body.identity]);
    const taken = await ctx.request(`/account/people/${bob.id}/identities`, { json: { provider: 'slack:T0123ABCD', subject: 'U0123ABCD' }, key });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('identity_taken');
    expect((await ctx.request(path, { json: { provider: 'Slack T01', subject: 'U 1' }, key })).body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/provider', '/subject']);
    // Without people:manage: refused like every account route.
    expect((await ctx.request(path, { key: alice.key })).body).toMatchObject({ status: 403, code: 'capability_missing', capability: 'people:manage' });
    // Another tenant's person is not found.
    const other = await ctx.signup();
    expect((await ctx.request(path, { key: other.apiKey })).status).toBe(404);

    const removed = await ctx.request(`${path}/${linked.body.identity.id}`, { method: 'DELETE', key });
    expect(removed.status, removed.text).toBe(200);
    expect((await ctx.request(path, { key })).body.identities).toEqual([]);
    const audit = (await ctx.request('/account/audit', { key })).body.receipts;
    expect(audit.slice(0, 2).map((r: { action: string }) => r.action)).toEqual(['identity.unlinked', 'identity.linked']);
    expect(audit[1].facts.related).toMatchObject({ provider: 'slack:T0123ABCD', subject: 'U0123ABCD' });
    for (const r of audit.slice(0, 2)) expect((await ctx.request('/v1/verify', { json: r.verify_request })).body.verified).toBe(true);
  });
});

describe('signed route callbacks decide as the linked person', () => {
  const WF = (tenantId: string) => `/integrations/callbacks/${tenantId}/workflow/privacy-office/review-decision`;

  async function workflowTenant() {
    const t = await routedTenant();
    ({ ctx, key } = t);
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: 'https://acme.service-now.com/api/flow', callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
    const gate = await ctx.request('/v1/gate', { json: gateBody('medicine', { action_type: 'phi-export' }), key });
    expect(gate.body.review_route).toBe('workflow:privacy-office');
    const [d] = (await ctx.request('/routing/outbox', { key })).body.dispatches;
    // The dispatch tells the flow which platform user to send.
    expect(d.payload.workflow.outbound_callback_rest_step.body_template.platform_user).toEqual({ provider: 'servicenow:acme', subject: '${task.assigned_to}' });
    return { t, actionKey: gate.body.action_key as string, dispatchKey: d.dispatch_key as string };
  }
  const signed = (path: string, raw: string) => ctx.request(path, { method: 'POST', raw, headers: { 'content-type': 'application/json', 'x-service-signature': sha256Sig(VALUES.ROUTING_TEST_CALLBACK, raw) } });
  const snapshot = async () => JSON.stringify(await Promise.all(['sealed_records', 'review_items', 'review_receipts', 'route_dispatches'].map((table) => ctx.sql(`SELECT * FROM ${table} ORDER BY 1`))));

  it('an unlinked or unnamed platform user seals nothing; once linked, the receipt names the person and the platform user, and verifies', async () => {
    const { t, actionKey, dispatchKey } = await workflowTenant();
    const sysUser = '9d385017c611228701d22104cc95c371';
    const body = (extra: Record<string, unknown>) => JSON.stringify({ dispatch_key: dispatchKey, decision: 'approved', reviewer: 'privacy-officer-3', ...extra });
    const before = await snapshot();
    const unlinked = await signed(WF(t.tenantId), body({ platform_user: { provider: 'servicenow:acme', subject: sysUser } }));
    expect(unlinked.status).toBe(403);
    expect(unlinked.body.code).toBe('platform_user_not_linked');
    expect(unlinked.text).not.toContain(sysUser);
    const unnamed = await signed(WF(t.tenantId), body({ idempotency_key: 'unnamed-1' }));
    expect(unnamed.status).toBe(403);
    expect(unnamed.body.code).toBe('platform_user_not_linked');
    // A Slack user on a workflow route is not this route's to name.
    const foreign = await signed(WF(t.tenantId), body({ platform_user: { provider: 'slack:T0123ABCD', subject: 'U0123ABCD' } }));
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors.map((e: { path: string }) => e.path)).toEqual(['/platform_user/provider']);
    expect(await snapshot()).toBe(before);

    const officer = await person('Privacy Officer');
    expect((await ctx.request(`/account/people/${officer.id}/identities`, { json: { provider: 'servicenow:acme', subject: sysUser }, key })).status).toBe(201);
    const res = await signed(WF(t.tenantId), body({ platform_user: { provider: 'servicenow:acme', subject: sysUser }, idempotency_key: 'linked-1' }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.review).toMatchObject({
      reviewed_action_key: actionKey,
      review_status: 'approved',
      reviewer: 'privacy-officer-3',
      principal: { principal_id: officer.id, kind: 'person', display_name: 'Privacy Officer' },
      asserted_by: { route: 'workflow:privacy-office', provider: 'servicenow:acme', subject: sysUser },
    });
    const context = res.body.review.evidence_packet.seal.attestation.context;
    expect(context).toMatchObject({ principal: { principal_id: officer.id }, asserted_by: { route: 'workflow:privacy-office', subject: sysUser } });
    const jwks = trustedKeySet((await ctx.request('/.well-known/service-keys.json')).body);
    expect(failedChecks(await verifyEvidence(res.body.review.verify_request, jwks))).toEqual([]);
    expect((await ctx.request(`/v1/records/${actionKey}`, { key })).body.review.approved_by).toEqual([
      expect.objectContaining({ principal_id: officer.id, display_name: 'Privacy Officer', asserted_by: { principal_id: null, display_name: null, route: 'workflow:privacy-office' } }),
    ]);
  });

  it('refuses a correctly signed callback to a disabled route, with nothing sealed', async () => {
    const { t, dispatchKey } = await workflowTenant();
    const officer = await person('Privacy Officer');
    await ctx.request(`/account/people/${officer.id}/identities`, { json: { provider: 'servicenow:acme', subject: 'sysuser1' }, key });
    await putRoute(t, 'workflow', 'privacy-office', { enabled: false, config: { url: 'https://acme.service-now.com/api/flow', callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
    const before = await snapshot();
    const raw = JSON.stringify({ dispatch_key: dispatchKey, decision: 'approved', reviewer: 'privacy-officer-3', platform_user: { provider: 'servicenow:acme', subject: 'sysuser1' } });
    const res = await signed(WF(t.tenantId), raw);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('callback_signature_invalid');
    expect(await snapshot()).toBe(before);
    // Enabled again, the very same signed bytes are accepted: only the route's state refused them.
    await putRoute(t, 'workflow', 'privacy-office', { enabled: true, config: { url: 'https://acme.service-now.com/api/flow', callback_secret_ref: SECRETS.callback }, secret_ref: SECRETS.token });
    expect((await signed(WF(t.tenantId), raw)).status).toBe(201);
  });

  it('a chat callback: unlinked Slack user answered with a view_submission error; a timestamp in the future is refused; linked, it decides', async () => {
    const t = await routedTenant();
    ({ ctx, key } = t);
    await putRoute(t, 'chat', 'legal-desk', { enabled: true, config: { channel_id: 'C0123456789', signing_secret_ref: SECRETS.slack }, secret_ref: SECRETS.token });
    await lawRoutesPolicy(t, { 'proposed-action': 'chat:legal-desk' });
    const gate = await pauseLaw(t);
    const [d] = (await ctx.request('/routing/outbox', { key })).body.dispatches;
    expect(d.payload.chat.review_callback_contract.platform_user).toMatchObject({ required: true });
    const path = `/integrations/callbacks/${t.tenantId}/chat/legal-desk/review-decision`;
    const post = (raw: string, ts: number) =>
      ctx.request(path, { method: 'POST', raw, headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': slackSig(VALUES.ROUTING_TEST_SLACK_SIGNING, ts, raw) } });
    const raw = (n: number) => JSON.stringify({ dispatch_key: d.dispatch_key, decision: 'approved', reviewer: 'U2CERLKJA', platform_user: { provider: 'slack:T1DC2JH3J', subject: 'U2CERLKJA' }, idempotency_key: `chat-${n}` });
    const before = await snapshot();

    const unlinked = await post(raw(1), nowSeconds(ctx));
    expect(unlinked.status).toBe(403);
    expect(unlinked.body).toMatchObject({ code: 'platform_user_not_linked', slack_response: { response_action: 'errors', errors: { reviewer: expect.stringContaining('not linked') } } });

    const officer = await person('Partner');
    await ctx.request(`/account/people/${officer.id}/identities`, { json: { provider: 'slack:T1DC2JH3J', subject: 'U2CERLKJA' }, key });
    const afterLink = await snapshot();
    // Correctly signed, but stamped more than the 300-second window ahead of the server clock.
    const future = await post(raw(2), nowSeconds(ctx) + 301);
    expect(future.status).toBe(401);
    expect(future.body.code).toBe('callback_stale');
    expect(await snapshot()).toBe(afterLink);
    expect(afterLink).not.toBe(before);

    const ok = await post(raw(3), nowSeconds(ctx));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.review).toMatchObject({ reviewed_action_key: gate.action_key, principal: { principal_id: officer.id }, asserted_by: { route: 'chat:legal-desk', provider: 'slack:T1DC2JH3J', subject: 'U2CERLKJA' } });
  });
});
