/**
 * The tenant API as the console reaches it: the account session cookie in place of an API key
 * on the routes that accept it (account/people.ts createKeyOrSessionAuth), each capability's
 * 403, CSRF on writes, a signed-in person reviewing as themselves, and the decisions timeline.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshTenantContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { signIn } from './account-helpers.ts';
import { gateBody } from './pack-fixtures.ts';

let ctx: TestContext;
let key: string;
let tenantId: string;
beforeEach(async () => ({ ctx, key, tenantId } = await freshTenantContext()));
afterEach(() => ctx.close());

async function pause(): Promise<string> {
  const res = await ctx.request('/v1/gate', { json: gateBody('law'), key });
  expect(res.body.decision).toBe('needs_review');
  return res.body.action_key as string;
}

/** A member holding only `capabilities`, signed in with their own key. */
async function member(capabilities: string[]) {
  const owner = await signIn(ctx, key);
  const added = await owner.request('/account/people', { json: { email: `m${capabilities.length}@example.com`, capabilities } });
  expect(added.status).toBe(201);
  return { session: await signIn(ctx, added.body.api_key), personId: added.body.person.id as string };
}

describe('the session on tenant API routes', () => {
  it('reads the board, the usage and a record with the cookie alone, for the session’s tenant', async () => {
    const actionKey = await pause();
    const s = await signIn(ctx, key);
    const board = await s.request('/active-manifest');
    expect(board.status).toBe(200);
    expect(board.body.tenant_id).toBe(tenantId);
    expect(board.body.items.map((i: { action_key: string }) => i.action_key)).toEqual([actionKey]);
    expect((await s.request('/tenant/usage')).status).toBe(200);
    expect((await s.request(`/v1/records/${actionKey}`)).status).toBe(200);
  });

  it('is not accepted where only a machine acts: the gate answers 401 to a cookie', async () => {
    const s = await signIn(ctx, key);
    const res = await s.request('/v1/gate', { json: gateBody('law') });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
  });

  it('answers 401 with the Bearer challenge when neither a key nor a cookie comes', async () => {
    const res = await ctx.request('/active-manifest');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="svc"');
  });

  it('refuses an ended session', async () => {
    const s = await signIn(ctx, key);
    expect((await s.request('/account/logout', { method: 'POST' })).status).toBe(200);
    const res = await s.request('/active-manifest');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('needs the CSRF token on a write', async () => {
    const actionKey = await pause();
    const s = await signIn(ctx, key);
    const personId = s.res.body.person.id;
    const res = await ctx.request('/v1/reviews', {
      json: { pack: 'law', action_key: actionKey, reviewer: personId, decision: 'approved' },
      headers: { cookie: s.cookie },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('csrf_token_invalid');
  });

  it('decides a review as the signed-in person, and refuses another reviewer name at the field', async () => {
    const actionKey = await pause();
    // A member who may decide but not delegate (owners hold reviews:delegate and may name others).
    const { session: s, personId } = await member(['reviews:decide']);
    const other = await s.request('/v1/reviews', { json: { pack: 'law', action_key: actionKey, reviewer: 'someone-else', decision: 'approved' } });
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual([expect.objectContaining({ in: 'body', path: '/reviewer', code: 'reviewer_not_authenticated_principal' })]);
    const ok = await s.request('/v1/reviews', { json: { pack: 'law', action_key: actionKey, reviewer: personId, decision: 'approved' } });
    expect(ok.status).toBe(201);
    expect(ok.body.review_status).toBe('approved');
  });

  it('gives an owner every capability, including ones added after the owner was created', async () => {
    const s = await signIn(ctx, key);
    expect(s.res.body.capabilities).toEqual(expect.arrayContaining(['reviews:decide', 'policy:manage', 'integrations:manage', 'exports:read']));
  });

  it('answers 403 capability_missing for each capability a member lacks, and lets reads through', async () => {
    const actionKey = await pause();
    const { session, personId } = await member([]);
    const refusals: [string, string, Record<string, unknown> | undefined, string][] = [
      ['POST', '/v1/reviews', { pack: 'law', action_key: actionKey, reviewer: personId, decision: 'approved' }, 'reviews:decide'],
      ['GET', '/tenant/exports/records', undefined, 'exports:read'],
      ['GET', '/tenant/exports/oscal', undefined, 'exports:read'],
      ['PUT', '/tenant/integrations/webhook/ops?events=record.sealed', { url: 'http://127.0.0.1:9/hook' }, 'integrations:manage'],
      ['PUT', '/tenant/policy?policy_pack=law', { version: 'v2' }, 'policy:manage'],
    ];
    for (const [method, path, json, capability] of refusals) {
      const res = await session.request(path, { method, ...(json ? { json } : {}) });
      expect(res.status, path).toBe(403);
      expect(res.body, path).toMatchObject({ code: 'capability_missing', capability });
    }
    expect((await session.request('/active-manifest')).status).toBe(200);
    expect((await session.request('/tenant/policy/receipts?policy_pack=law')).status).toBe(200);
    expect((await ctx.request(`/v1/records/${actionKey}`)).status).toBe(401);
  });

  it('lets a member decide once granted reviews:decide', async () => {
    const actionKey = await pause();
    const { session, personId } = await member(['reviews:decide']);
    const res = await session.request('/v1/reviews', { json: { pack: 'law', action_key: actionKey, reviewer: personId, decision: 'rejected' } });
    expect(res.status).toBe(201);
  });

  it('lists the session scheme beside the key schemes in the OpenAPI description', async () => {
    const doc = (await ctx.request('/openapi.json')).body;
    expect(doc.paths['/active-manifest'].get.security).toEqual([{ BearerAuth: [] }, { ServiceKey: [] }, { ServiceAccountSession: [] }]);
    expect(doc.paths['/v1/gate'].post.security).toEqual([{ BearerAuth: [] }, { ServiceKey: [] }]);
  });

  it('says in the tenant console plan where the console is and which operations take the session', async () => {
    const plan = (await ctx.request('/deployment/tenant-console-plan')).body;
    expect(plan.console_path).toBe('/console');
    const ops = plan.sections.flatMap((s: { operations: unknown[] }) => s.operations);
    expect(ops).toContainEqual(expect.objectContaining({ method: 'GET', path: '/active-manifest', accepts_session: true }));
    expect(ops).toContainEqual(expect.objectContaining({ method: 'POST', path: '/v1/gate', accepts_session: false }));
  });
});

describe('GET /tenant/exports/records/timeline', () => {
  it('counts gate decisions per hour by outcome, empty buckets included', async () => {
    await pause();
    await ctx.request('/v1/gate', { json: gateBody('law'), key });
    ctx.clock.advance(2 * 3600_000);
    await ctx.request('/v1/gate', { json: gateBody('law'), key });
    const res = await ctx.request('/tenant/exports/records/timeline?bucket=hour&from=2025-01-01T00:00:00Z&to=2025-01-01T03:00:00Z', { key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: '2025-01-01T00:00:00.000Z', to: '2025-01-01T03:00:00.000Z', bucket: 'hour', decisions: ['needs_review'] });
    expect(res.body.buckets).toEqual([
      { start: '2025-01-01T00:00:00.000Z', counts: { needs_review: 2 } },
      { start: '2025-01-01T01:00:00.000Z', counts: {} },
      { start: '2025-01-01T02:00:00.000Z', counts: { needs_review: 1 } },
    ]);
  });

  it('defaults to 14 whole days by day, the current day last', async () => {
    await pause();
    const res = await ctx.request('/tenant/exports/records/timeline', { key });
    expect(res.body).toMatchObject({ from: '2024-12-19T00:00:00.000Z', to: '2025-01-02T00:00:00.000Z', bucket: 'day' });
    expect(res.body.buckets.at(-1)).toEqual({ start: '2025-01-01T00:00:00.000Z', counts: { needs_review: 1 } });
    expect(res.body.buckets).toHaveLength(14);
  });

  it('refuses a range of more than 744 buckets and a bad bucket, each at its field', async () => {
    const long = await ctx.request('/tenant/exports/records/timeline?bucket=hour&from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', { key });
    expect(long.status).toBe(422);
    expect(long.body.errors).toEqual([expect.objectContaining({ path: '/from', code: 'range_too_long' })]);
    const bad = await ctx.request('/tenant/exports/records/timeline?bucket=week', { key });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ in: 'query', path: '/bucket' });
  });
});
