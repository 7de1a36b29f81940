/**
 * The law grading mirror (interface-spec "Review request", GET /law/grading-mirror):
 * the published rubric and its digest, grades posted with a law review, the mirror seal in the
 * response and where it is verified, and 422 for a wrong digest, grade or key set.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { canonicalize } from '../../shared/canonical-json.ts';
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { failedChecks, verifyEvidence } from '../../shared/verify.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody } from './pack-fixtures.ts';

const KEYS = ['citation_support', 'privilege_boundary', 'supervision_route', 'client_confidentiality', 'filing_readiness'];
const GRADES = { citation_support: 'PASS', privilege_boundary: 'PASS', supervision_route: 'PARTIAL', client_confidentiality: 'NA', filing_readiness: 'FAIL' };

let ctx: TestContext;
let key: string;
let mirror: { mirror_version: string; mirror_digest: string; rubric: unknown; verify_href: string };
beforeEach(async () => {
  ctx = await createTestContext();
  ({ apiKey: key } = await ctx.signup());
  mirror = (await ctx.request('/law/grading-mirror')).body;
});
afterEach(async () => {
  await ctx.close();
});

async function pausedLawAction(): Promise<string> {
  const res = await ctx.request('/v1/gate', { json: gateBody('law'), key });
  expect(res.body.decision).toBe('needs_review');
  return res.body.action_key;
}

function lawReview(actionKey: string, overrides: Record<string, unknown> = {}) {
  return {
    pack: 'law',
    action_key: actionKey,
    reviewer: 'attorney-17',
    decision: 'approved',
    mirror_version: mirror.mirror_version,
    mirror_digest: mirror.mirror_digest,
    mirror_grades: { ...GRADES },
    ...overrides,
  };
}

const review = (json: unknown) => ctx.request('/v1/reviews', { json, key });
const verifyMirror = (json: unknown) => ctx.request('/law/grading-mirror/verify', { json });
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('GET /law/grading-mirror', () => {
  it('publishes the rubric, its version and the SHA-256 of its JCS form, without credentials', async () => {
    const res = await ctx.request('/law/grading-mirror');
    expect(res.status).toBe(200);
    expect(res.body.mirror_version).toBe('law-mirror/1');
    // Recomputed here from the published rubric (RFC 8785 + SHA-256), not taken from the service.
    expect(res.body.mirror_digest).toBe(sha256(canonicalize(res.body.rubric)));
    expect(res.body.keys).toEqual(KEYS);
    expect(res.body.grade_values).toEqual(['PASS', 'PARTIAL', 'FAIL', 'NA']);
    expect(res.body.rubric.mirror_version).toBe('law-mirror/1');
    expect(res.body.rubric.dimensions.map((d: any) => d.key)).toEqual(KEYS);
    for (const d of res.body.rubric.dimensions) expect(Object.keys(d.grades).sort()).toEqual(['FAIL', 'NA', 'PARTIAL', 'PASS']);
    expect(res.body.verify_href).toBe('/law/grading-mirror/verify');
  });
});

describe('a law review with mirror grades', () => {
  it('seals the tuple inside the review receipt; mirror_seal verifies at the published endpoint and offline', async () => {
    const actionKey = await pausedLawAction();
    const res = await review(lawReview(actionKey));
    expect(res.status).toBe(201);
    const seal = res.body.mirror_seal;
    expect(seal).toMatchObject({
      format: 'svc.law-mirror-seal/v1',
      mirror_version: 'law-mirror/1',
      mirror_digest: mirror.mirror_digest,
      mirror_grades: GRADES,
      reviewed_action_key: actionKey,
      review_action_key: res.body.action_key,
      verify_href: '/law/grading-mirror/verify',
    });
    // The mirror seal is the review receipt: one signed, atomic fact.
    expect(seal.verify_request).toEqual(res.body.verify_request);
    // No raw legal text in the tuple: a version, a digest and five enum values.
    expect(res.body.evidence_packet.seal.attestation.context.mirror).toEqual({ mirror_version: 'law-mirror/1', mirror_digest: mirror.mirror_digest, mirror_grades: GRADES });

    const online = await verifyMirror(seal);
    expect(online.status).toBe(200);
    expect(online.body).toMatchObject({ verified: true, failed_checks: [], review_action_key: res.body.action_key, reviewed_action_key: actionKey });
    expect(online.body.mirror_checks.map((c: any) => [c.name, c.ok])).toEqual([
      ['mirror_rubric', true],
      ['mirror_grades', true],
      ['mirror_commitment', true],
    ]);
    expect(online.body.evidence).toMatchObject({ verified: true, key_status: 'sandbox' });

    // Offline: the published rubric and keys are all a client needs.
    const att = seal.verify_request.seal.attestation;
    expect(sha256(canonicalize(mirror.rubric))).toBe(att.context.mirror.mirror_digest);
    expect(att.context.reviewed_action_key).toBe(actionKey);
    const keys = trustedKeySet((await ctx.request('/.well-known/service-keys.json')).body);
    expect(failedChecks(await verifyEvidence(seal.verify_request, keys))).toEqual([]);

    // And the receipt itself verifies at /v1/verify like any other.
    expect((await ctx.request('/v1/verify', { json: res.body.verify_request })).body.verified).toBe(true);
  });

  it('fails verification naming the check for a changed grade, digest or signed context', async () => {
    const res = await review(lawReview(await pausedLawAction()));
    const seal = res.body.mirror_seal;

    const regraded = await verifyMirror({ ...seal, mirror_grades: { ...GRADES, filing_readiness: 'PASS' } });
    expect(regraded.body).toMatchObject({ verified: false, failed_checks: ['mirror_commitment'] });

    const otherDigest = await verifyMirror({ ...seal, mirror_digest: '0'.repeat(64) });
    expect(otherDigest.body.failed_checks).toEqual(['mirror_rubric', 'mirror_commitment']);

    const badKeys = await verifyMirror({ ...seal, mirror_grades: { ...GRADES, extra_key: 'PASS' } });
    expect(badKeys.body.failed_checks).toEqual(['mirror_grades', 'mirror_commitment']);

    // Editing the signed tuple to match a forged claim breaks the signature instead.
    const forged = structuredClone(seal);
    forged.mirror_grades.filing_readiness = 'PASS';
    forged.verify_request.seal.attestation.context.mirror.mirror_grades.filing_readiness = 'PASS';
    const f = await verifyMirror(forged);
    expect(f.body.verified).toBe(false);
    expect(f.body.failed_checks).toContain('signature');
    expect(f.body.failed_checks).not.toContain('mirror_commitment');
  });

  it('lets a law review go without grades (they are optional)', async () => {
    const res = await review({ pack: 'law', action_key: await pausedLawAction(), reviewer: 'attorney-17', decision: 'rejected' });
    expect(res.status).toBe(201);
    expect(res.body.mirror_seal).toBeUndefined();
    expect(res.body.evidence_packet.seal.attestation.context.mirror).toBeUndefined();
  });
});

describe('422 for a wrong mirror tuple, naming each failing field', () => {
  const paths = (res: { body: any }) => res.body.errors.map((e: any) => e.path).sort();

  it('wrong digest', async () => {
    const res = await review(lawReview(await pausedLawAction(), { mirror_digest: 'a'.repeat(64) }));
    expect(res.status).toBe(422);
    expect(paths(res)).toEqual(['/mirror_digest']);
    expect(res.body.errors[0].message).toContain(mirror.mirror_digest);
  });

  it('wrong version', async () => {
    const res = await review(lawReview(await pausedLawAction(), { mirror_version: 'law-mirror/0' }));
    expect(res.status).toBe(422);
    expect(paths(res)).toEqual(['/mirror_version']);
  });

  it('unknown grade', async () => {
    const res = await review(lawReview(await pausedLawAction(), { mirror_grades: { ...GRADES, citation_support: 'GOOD' } }));
    expect(res.status).toBe(422);
    expect(paths(res)).toEqual(['/mirror_grades/citation_support']);
  });

  it('missing key', async () => {
    const { filing_readiness: _dropped, ...four } = GRADES;
    const res = await review(lawReview(await pausedLawAction(), { mirror_grades: four }));
    expect(res.status).toBe(422);
    expect(paths(res)).toEqual(['/mirror_grades/filing_readiness']);
  });

  it('extra key', async () => {
    const res = await review(lawReview(await pausedLawAction(), { mirror_grades: { ...GRADES, tone: 'PASS' } }));
    expect(res.status).toBe(422);
    expect(paths(res)).toEqual(['/mirror_grades/tone']);
  });

  it('all of them at once, in one answer', async () => {
    const { filing_readiness: _dropped, ...four } = GRADES;
    const res = await review(lawReview(await pausedLawAction(), { mirror_digest: 'b'.repeat(64), mirror_grades: { ...four, citation_support: 'pass', tone: 'NA' } }));
    expect(res.status).toBe(422);
    expect(paths(res)).toEqual(['/mirror_digest', '/mirror_grades/citation_support', '/mirror_grades/filing_readiness', '/mirror_grades/tone']);
  });

  it('a partial tuple, and a tuple on a pack with no mirror', async () => {
    const actionKey = await pausedLawAction();
    const partial = await review({ pack: 'law', action_key: actionKey, reviewer: 'r', decision: 'approved', mirror_grades: GRADES });
    expect(partial.status).toBe(422);
    expect(paths(partial)).toEqual(['/mirror_digest', '/mirror_version']);

    const med = await ctx.request('/v1/gate', { json: gateBody('medicine'), key });
    expect(med.body.decision).toBe('needs_review');
    const wrongPack = await review(lawReview(med.body.action_key, { pack: 'medicine' }));
    expect(wrongPack.status).toBe(422);
    expect(paths(wrongPack)).toEqual(['/mirror_digest', '/mirror_grades', '/mirror_version']);
    expect(wrongPack.body.errors[0].message).toContain('law only');
    // Nothing was sealed for any refused review; the action is still paused.
    expect((await ctx.request(`/v1/records/${actionKey}`, { key })).body.review.status).toBe('pending');
  });
});

describe('OpenAPI description', () => {
  let doc: any;
  let docCtx: TestContext;
  beforeAll(async () => {
    docCtx = await createTestContext();
    doc = (await docCtx.request('/openapi.json')).body;
  });
  afterAll(async () => {
    await docCtx.close();
  });

  it('publishes the mirror verify endpoint, the rubric, the review and the board routes', () => {
    expect(doc.paths['/law/grading-mirror/verify'].post.security).toEqual([]);
    expect(doc.paths['/law/grading-mirror'].get.security).toEqual([]);
    expect(doc.paths['/v1/reviews'].post.responses['201']).toBeDefined();
    expect(doc.paths['/v1/reviews'].post.responses['409']).toBeDefined();
    expect(doc.paths['/active-manifest'].get.security).toEqual([{ BearerAuth: [] }, { ServiceKey: [] }, { ServiceAccountSession: [] }]);
    expect(doc.components.schemas.MirrorGrades.required).toEqual(KEYS);
    expect(doc.components.schemas.MirrorGrades.additionalProperties).toBe(false);
  });
});
