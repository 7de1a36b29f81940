/**
 * GET /law/grading-mirror (interface-spec Endpoints: "Public law mirror rubric and digest") and
 * POST /law/grading-mirror/verify, where a mirror seal is verified. The spec leaves the
 * verifying path unshown; this is it, published in GET /law/grading-mirror (verify_href), in
 * every mirror_seal, and in the OpenAPI description. Both are public (interface-spec
 * Authentication 4, 5): anyone may check a seal, and anonymous checks raise no events.
 */
import { trustedKeySet } from '../../shared/trusted-keys.ts';
import { createRouter, defineRoute, jsonBody, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { MIRROR_DIGEST, MIRROR_GRADES, MIRROR_KEYS, MIRROR_RUBRIC, MIRROR_VERIFY_PATH, MIRROR_VERSION } from './mirror.ts';
import { verifyMirrorSeal } from './mirror-verify.ts';
import type { MirrorSealInput } from './mirror-verify.ts';
import { MirrorRubricResponse, MirrorVerifyRequest, MirrorVerifyResponse } from './schema.ts';

export function mirrorRoutes(deps: RouteDeps) {
  const router = createRouter();
  const trusted = trustedKeySet(deps.keyring.jwks());

  const rubric = defineRoute({
    method: 'get',
    path: '/law/grading-mirror',
    operationId: 'getGradingMirror',
    tags: ['reviews'],
    auth: 'public',
    summary: 'The public law grading rubric, its mirror_version and mirror_digest',
    request: { query: z.object({}).strict() },
    responses: { 200: jsonContent(MirrorRubricResponse, 'The pinned rubric; mirror_digest = SHA-256 of the JCS bytes of rubric') },
  });
  const rubricBody = {
    mirror_version: MIRROR_VERSION,
    mirror_digest: MIRROR_DIGEST,
    digest_recipe: 'mirror_digest = lowercase hex SHA-256 of the RFC 8785 (JCS) UTF-8 bytes of the rubric member',
    keys: [...MIRROR_KEYS],
    grade_values: [...MIRROR_GRADES],
    rubric: MIRROR_RUBRIC as unknown as Record<string, unknown>,
    verify_href: MIRROR_VERIFY_PATH,
  };
  router.openapi(rubric, (c) => c.json(rubricBody, 200));

  const verify = defineRoute({
    method: 'post',
    path: MIRROR_VERIFY_PATH,
    operationId: 'verifyMirrorSeal',
    tags: ['reviews'],
    auth: 'public',
    summary: 'Verify a law mirror seal: rubric digest, grades, the tuple committed in the signed review receipt, and the receipt itself',
    description:
      'Post the mirror_seal object of a POST /v1/reviews response as it is. Checks are recomputed from the posted object, the published rubric and the ' +
      'published keys (/.well-known/service-keys.json), so an offline verifier holding both reaches the same result.',
    request: { body: jsonBody(MirrorVerifyRequest) },
    responses: { 200: jsonContent(MirrorVerifyResponse, 'Itemized result; verified is true only when every check passed') },
  });
  router.openapi(verify, async (c) => {
    const body = c.req.valid('json') as MirrorSealInput;
    return c.json(await verifyMirrorSeal(body, trusted), 200);
  });

  return router;
}
