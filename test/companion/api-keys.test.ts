/**
 * The key and people lifecycle on the account API (account/principal-routes.ts) and its admin
 * receipts (account/admin-receipts.ts): create, list, rotate with an overlap, revoke and expire
 * keys; least privilege for grants and keys; the last active owner; every change sealed,
 * listed in GET /account/audit newest first, and verifiable by POST /v1/verify and offline.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { capabilityDigest } from '../../companion/account/admin-receipts.ts';
import { createTestContext, freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { signIn } from './account-helpers.ts';
import type { Session } from './account-helpers.ts';
import { gateBody } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let owner: Session;
beforeEach(async () => {
  ({ ctx, key } = await freshTenantContext());
  owner = await signIn(ctx, key);
});
afterEach(() => ctx.close());

let n = 0;
async function addMember(capabilities: string[], by: Session = owner) {
  const res = await by.request('/account/people', { json: { email: `k${++n}@example.com`, display_name: `Member ${n}`, capabilities } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.person.id as string, key: res.body.api_key as string, body: res.body };
}

const gate = (k: string) => ctx.request('/v1/gate', { json: gateBody('law'), key: k });

describe('keys', () => {
  it('lists keys with label, last four, principal, capabilities and last use, never a secret', async () => {
    const minted = await owner.request('/account/api-keys', { json: { label: 'deploy bot' } });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.headers.get('cache-control')).toBe('no-store');
    const secret = minted.body.api_key as string;
    expect(secret).toMatch(/^svc_test_/);
    expect((await gate(secret)).status).toBe(201);
    const list = await ctx.request('/account/api-keys', { key });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain(secret.slice(9, 30));
    const mine = list.body.keys.find((k: { id: string }) => k.id === minted.body.key.id);
    expect(mine).toMatchObject({ label: 'deploy bot', last_four: secret.slice(-4), status: 'active', capability_subset: null, expires_at: null, revoked_at: null });
    expect(mine.principal).toEqual({ id: owner.res.body.person.id, kind: 'person', display_name: owner.res.body.person.id });
    expect(mine.capabilities).toContain('people:manage');
    expect(mine.last_used_at).toBe(ctx.clock.now().toISOString());
  });

  it('revokes a key: its next request is refused, in another process too', async () => {
    const other = await createTestContext({ dataDir: ctx.dataDir });
    try {
      const minted = await owner.request('/account/api-keys', { json: {} });
      const secret = minted.body.api_key as string;
      expect((await other.request('/active-manifest', { key: secret })).status).toBe(200);
      const revoked = await owner.request(`/account/api-keys/${minted.body.key.id}/revoke`, { method: 'POST' });
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body.key).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
      expect((await other.request('/active-manifest', { key: secret })).status).toBe(401);
      expect((await ctx.request('/active-manifest', { key: secret })).status).toBe(401);
      const again = await owner.request(`/account/api-keys/${minted.body.key.id}/revoke`, { method: 'POST' });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('key_not_active');
    } finally {
      await other.close();
    }
  });

  it('rotates a key: the new one works at once, the old one until the overlap ends', async () => {
    const minted = await owner.request('/account/api-keys', { json: { label: 'rotating', capabilities: ['gate:submit', 'records:read'] } });
    const old = minted.body.api_key as string;
    const rotated = await owner.request(`/account/api-keys/${minted.body.key.id}/rotate`, { json: { overlap_seconds: 3600 } });
    expect(rotated.status, rotated.text).toBe(201);
    const fresh = rotated.body.api_key as string;
    expect(rotated.body.key).toMatchObject({ label: 'rotating', capability_subset: ['gate:submit', 'records:read'], status: 'active' });
    expect(rotated.body.previous_key.expires_at).toBe(new Date(ctx.clock.now().getTime() + 3600_000).toISOString());
    expect((await gate(fresh)).status).toBe(201);
    expect((await gate(old)).status).toBe(201);
    ctx.clock.advance(3600_000 - 1);
    expect((await gate(old)).status).toBe(201);
    ctx.clock.advance(1);
    expect((await gate(old)).status).toBe(401);
    expect((await gate(fresh)).status).toBe(201);
    const list = (await owner.request('/account/api-keys')).body.keys;
    expect(list.find((k: { id: string }) => k.id === minted.body.key.id).status).toBe('expired');
    // An ended key is not rotated again.
    const twice = await owner.request(`/account/api-keys/${minted.body.key.id}/rotate`, { json: {} });
    expect(twice.body.code).toBe('key_not_active');
  });

  it('refuses an overlap beyond seven days and an expiry in the past, each at its field', async () => {
    const minted = await owner.request('/account/api-keys', { json: {} });
    const res = await owner.request(`/account/api-keys/${minted.body.key.id}/rotate`, { json: { overlap_seconds: 7 * 86400 + 1 } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/overlap_seconds' })]);
    const past = await owner.request('/account/api-keys', { json: { expires_at: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/expires_at' })]);
  });

  it('stops a key at its expiry', async () => {
    const at = new Date(ctx.clock.now().getTime() + 60_000).toISOString();
    const minted = await owner.request('/account/api-keys', { json: { expires_at: at } });
    expect(minted.body.key.expires_at).toBe(at);
    expect((await gate(minted.body.api_key)).status).toBe(201);
    ctx.clock.advance(60_000);
    expect((await gate(minted.body.api_key)).status).toBe(401);
  });

  it("mints keys only for oneself or a service account, and never beyond the principal's or the actor's capabilities", async () => {
    const m = await addMember(['records:read']);
    const forOther = await owner.request('/account/api-keys', { json: { principal_id: m.id } });
    expect(forOther.status).toBe(422);
    expect(forOther.body.errors).toEqual([expect.objectContaining({ path: '/principal_id', code: 'principal_not_keyable' })]);

    const manager = await addMember(['people:manage']);
    const managerSession = await signIn(ctx, manager.key);
    const wider = await managerSession.request('/account/api-keys', { json: { capabilities: ['records:read', 'policy:manage'] } });
    expect(wider.status).toBe(422);
    expect(wider.body.errors).toEqual([expect.objectContaining({ path: '/capabilities/1', code: 'capability_exceeds_principal' })]);

    // A service account holding policy:manage: the manager, who lacks it, can only mint it a narrower key.
    const sa = await owner.request('/account/service-accounts', { json: { name: 'policy bot', capabilities: ['policy:manage'] } });
    const saId = sa.body.service_account.id as string;
    const full = await managerSession.request('/account/api-keys', { json: { principal_id: saId } });
    expect(full.status).toBe(403);
    expect(full.body).toMatchObject({ code: 'capability_not_held', capabilities: ['policy:manage'] });
    const narrow = await managerSession.request('/account/api-keys', { json: { principal_id: saId, capabilities: ['gate:submit'] } });
    expect(narrow.status, narrow.text).toBe(201);
    expect(narrow.body.key.capabilities).toEqual(['gate:submit']);
  });
});

describe('people', () => {
  it('changes capabilities with PATCH, and only within what the actor holds', async () => {
    const m = await addMember([]);
    expect(m.body.person).toMatchObject({ display_name: `Member ${n}`, email: `k${n}@example.com`, status: 'active' });
    const res = await owner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { capabilities: ['reviews:decide', 'gate:submit'] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.person.capabilities).toEqual(['reviews:decide', 'gate:submit']);
    // Their key now lacks records:read, which the board needs.
    expect((await ctx.request('/active-manifest', { key: m.key })).body).toMatchObject({ code: 'capability_missing', capability: 'records:read' });

    const manager = await addMember(['people:manage']);
    const managerSession = await signIn(ctx, manager.key);
    const grant = await managerSession.request(`/account/people/${m.id}`, { method: 'PATCH', json: { capabilities: ['policy:manage'] } });
    expect(grant.status).toBe(403);
    expect(grant.body).toMatchObject({ code: 'capability_not_held', capabilities: ['policy:manage'] });
    expect(grant.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/capabilities/0' })]);
    // Taking capabilities away is within anyone's people:manage.
    expect((await managerSession.request(`/account/people/${m.id}`, { method: 'PATCH', json: { capabilities: [] } })).status).toBe(200);
    // An owner is changed by owners only.
    const ownerId = owner.res.body.person.id as string;
    const demote = await managerSession.request(`/account/people/${ownerId}`, { method: 'PATCH', json: { status: 'deactivated' } });
    expect(demote.status).toBe(403);
  });

  it('never deactivates or demotes the last active owner, and does once there is another', async () => {
    const ownerId = owner.res.body.person.id as string;
    for (const json of [{ status: 'deactivated' }, { role: 'member' }]) {
      const res = await owner.request(`/account/people/${ownerId}`, { method: 'PATCH', json });
      expect(res.status, JSON.stringify(json)).toBe(409);
      expect(res.body).toMatchObject({ code: 'last_owner' });
    }
    expect((await ctx.request('/account/audit', { key })).body.receipts.map((r: { action: string }) => r.action)).toEqual([]);
    const m = await addMember([]);
    expect((await owner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { role: 'owner' } })).status).toBe(200);
    const demoted = await owner.request(`/account/people/${ownerId}`, { method: 'PATCH', json: { role: 'member', capabilities: ['records:read'] } });
    expect(demoted.status, demoted.text).toBe(200);
    expect(demoted.body.person).toMatchObject({ role: 'member', capabilities: ['records:read'] });
    // The former owner's session now holds only what was granted: no longer people:manage.
    expect((await owner.request('/account/people')).body).toMatchObject({ code: 'capability_missing', capability: 'people:manage' });
    // And the new owner is now the last one.
    const newOwner = await signIn(ctx, m.key);
    expect((await newOwner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { status: 'deactivated' } })).body.code).toBe('last_owner');
  });

  it('answers 404 for a person of another tenant', async () => {
    const other = await ctx.signup();
    const otherOwner = (await signIn(ctx, other.apiKey)).res.body.person.id as string;
    const res = await owner.request(`/account/people/${otherOwner}`, { method: 'PATCH', json: { capabilities: [] } });
    expect(res.status).toBe(404);
  });
});

describe('admin receipts', () => {
  it('seals every change, lists them newest first in pages, and each verifies on the service and offline', async () => {
    const m = await addMember(['reviews:decide']);
    await owner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { capabilities: ['exports:read'] } });
    const minted = await owner.request('/account/api-keys', { json: { label: 'x' } });
    await owner.request(`/account/api-keys/${minted.body.key.id}/revoke`, { method: 'POST' });
    await owner.request(`/account/people/${m.id}`, { method: 'PATCH', json: { status: 'deactivated' } });

    const first = await owner.request('/account/audit?limit=3');
    expect(first.status, first.text).toBe(200);
    expect(first.body.receipts.map((r: { action: string }) => r.action)).toEqual(['person.deactivated', 'key.revoked', 'key.created']);
    const second = await owner.request(`/account/audit?limit=3&before=${first.body.next_before}`);
    expect(second.body.receipts.map((r: { action: string }) => r.action)).toEqual(['person.changed', 'person.added']);
    expect(second.body.next_before).toBeNull();

    const changed = second.body.receipts[0];
    const ownerId = owner.res.body.person.id as string;
    expect(changed).toMatchObject({ actor_id: ownerId, subject_id: m.id });
    expect(changed.facts).toMatchObject({
      action: 'person.changed',
      actor: { id: ownerId, kind: 'person' },
      subject: { id: m.id, kind: 'person' },
      capabilities_before_sha256: capabilityDigest(['reviews:decide', 'gate:submit', 'records:write', 'records:read']),
      capabilities_after_sha256: capabilityDigest(['exports:read']),
    });
    expect(changed.evidence_packet.seal.attestation.context).toEqual(changed.facts);
    expect((await ctx.request(changed.href, { key })).status).toBe(200);
    expect((await ctx.request(`/v1/records/${changed.action_key}`, { key })).body.verify_request).toEqual(changed.verify_request);

    const jwks = (await ctx.request('/.well-known/service-keys.json')).body;
    for (const r of [...first.body.receipts, ...second.body.receipts]) {
      const online = await ctx.request('/v1/verify', { json: r.verify_request });
      expect(online.body.verified, r.action).toBe(true);
      expect(failedChecks(await verifyEvidence(r.verify_request, trustedKeySet(jwks))), r.action).toEqual([]);
    }
    // A receipt whose facts were altered does not verify.
    const forged = structuredClone(changed.verify_request);
    forged.seal.attestation.context.capabilities_after_sha256 = capabilityDigest(['policy:manage']);
    expect((await ctx.request('/v1/verify', { json: forged })).body.verified).toBe(false);
  });

  it('is in the records export', async () => {
    const m = await addMember([]);
    const exported = await ctx.request('/tenant/exports/records', { key });
    expect(exported.status).toBe(200);
    const receipt = (await owner.request('/account/audit')).body.receipts[0];
    expect(receipt.subject_id).toBe(m.id);
    expect(exported.text).toContain(receipt.action_key);
  });
});
