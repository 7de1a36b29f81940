/** What the custody tests check of every production signer: a real seal, verified twice. */
import { expect } from 'vitest';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import type { TestContext } from './helpers.ts';
import { countSealed, gateBody } from './pack-fixtures.ts';

/** A production tenant gates one action; returns the seal's key_id after both verifications. */
export async function sealProductionAndVerify(ctx: TestContext): Promise<string> {
  const { apiKey } = ctx.productionTenant();
  const res = await ctx.request('/v1/gate', { json: gateBody('law'), key: apiKey });
  expect(res.status).toBe(201);
  const verifyRequest = res.body.verify_request;
  const online = await ctx.request('/v1/verify', { json: verifyRequest });
  expect(online.body).toMatchObject({ verified: true, key_status: 'active', dev_key: false, failed_checks: [] });
  // Offline: the shared verifier against the JWKS the service publishes.
  const jwks = (await ctx.request('/.well-known/service-keys.json')).body;
  const offline = await verifyEvidence(verifyRequest, trustedKeySet(jwks));
  expect(failedChecks(offline)).toEqual([]);
  expect(offline.key_status).toBe('active');
  const keyId = res.body.evidence_packet.seal.key_id as string;
  expect(jwks.keys).toContainEqual(expect.objectContaining({ kid: keyId, status: 'active', dev_key: false }));
  return keyId;
}

/** A production gate the signer cannot sign answers 503 problem+json and stores nothing. */
export async function expectSealRefused(ctx: TestContext): Promise<void> {
  const { apiKey } = ctx.productionTenant();
  const before = await countSealed(ctx);
  const res = await ctx.request('/v1/gate', { json: gateBody('law'), key: apiKey });
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status: 503, code: 'signer_unavailable' });
  expect(await countSealed(ctx)).toBe(before);
}
