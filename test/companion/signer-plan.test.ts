/**
 * GET /deployment/signer-plan with the embedded default custody: the key file says plainly it
 * is not a managed key service, and the plan says how to move to one. (The PKCS#11 and KMS
 * plans are checked in signer-pkcs11.test.ts and signer-kms.test.ts.)
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PRODUCTION_KEY_FILE } from '../../companion/core/signer.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

let ctx: TestContext;
beforeEach(async () => {
  ctx = await createTestContext();
});
afterEach(async () => {
  await ctx.close();
});

describe('GET /deployment/signer-plan', () => {
  it('reports the file signer as neither managed nor non-exportable, with the steps to a managed custody', async () => {
    const res = await ctx.request('/deployment/signer-plan');
    expect(res.status).toBe(200);
    expect(res.body.production_custody_managed).toBe(false);
    expect(res.body.signers).toEqual([
      expect.objectContaining({ role: 'sandbox', kind: 'dev-seed', managed: false, non_exportable: false, key_id: ctx.deps.keyring.sandbox.keyId, algorithm: 'Ed25519', locators: {} }),
      expect.objectContaining({
        role: 'production',
        kind: 'file',
        managed: false,
        non_exportable: false,
        key_id: ctx.deps.keyring.production.keyId,
        locators: { file: path.join(ctx.dataDir, PRODUCTION_KEY_FILE) },
      }),
    ]);
    expect(res.body.signers[1].description).toMatch(/NOT a managed key service/);
    expect(res.body.next_steps[0]).toMatch(/SVC_SIGNER=pkcs11.*SVC_SIGNER=aws-kms/);
  });

  it('needs no credential and is described in the OpenAPI document with the other control-plane maps', async () => {
    const doc = (await ctx.request('/openapi.json')).body;
    const op = doc.paths['/deployment/signer-plan'].get;
    expect(op).toMatchObject({ operationId: 'getSignerPlan', tags: ['control-plane'], security: [] });
  });

  it('names every setting the chosen custody lacks, at once', async () => {
    await expect(createTestContext({ env: { SVC_SIGNER: 'aws-kms' } })).rejects.toThrow(/SVC_SIGNER=aws-kms needs SVC_KMS_KEY_ID[\s\S]*SVC_SIGNER=aws-kms needs SVC_KMS_REGION/);
    await expect(createTestContext({ env: { SVC_SIGNER: 'vault' } })).rejects.toThrow(/SVC_SIGNER must be one of file, pkcs11, aws-kms/);
  });
});
