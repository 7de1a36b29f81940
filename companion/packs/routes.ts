/**
 * GET /v1/packs (interface-spec Endpoints: "Lists each pack and its exact required request
 * fields"). Public, like the rest of what a verifier needs to judge a seal: each manifest is
 * published verbatim beside its digest, so SHA-256 over the JCS bytes of an entry without
 * manifest_digest reproduces the manifest_digest committed in every seal it shaped. Likewise the
 * law engine's ruleset under engines, beside the rules_digest its seals commit.
 */
import { etag } from 'hono/etag';
import { LAW_RULES_DIGEST, LAW_RULESET } from './law-ruleset/ruleset.ts';
import { createRouter, defineRoute, jsonContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';
import { BYTES_PER_TOKEN, CENTS_PER_CREDIT, MAX_CREDITS_PER_ACTION, TOKENS_PER_BLOCK } from '../metering/credits.ts';
import { CLAIM_BOUNDARY, GateManifestSchema, RecordManifestSchema } from './manifest.ts';
import { gatePacks, recordPacks } from './registry.ts';

const Digest = z.string().regex(/^[0-9a-f]{64}$/);

const PackList = z
  .object({
    packs: z.array(
      z.union([GateManifestSchema.extend({ manifest_digest: Digest }), RecordManifestSchema.extend({ manifest_digest: Digest })]),
    ),
    manifest_digest_rule: z.string(),
    metering: z.object({
      usage_unit: z.literal('credits'),
      cents_per_credit: z.number().int(),
      bytes_per_token: z.number().int(),
      tokens_per_block: z.number().int(),
      max_credits_per_action: z.number().int(),
      token_estimate: z.string(),
      credits: z.string(),
    }),
    claim_boundary: z.string(),
    engines: z.record(
      z.string(),
      z.object({ version: z.string(), rules_digest: Digest, rules_digest_rule: z.string(), ruleset: z.record(z.string(), z.unknown()) }),
    ),
  })
  .openapi('PackList');

/** Built once: manifests are frozen at startup. */
function packList(): z.infer<typeof PackList> {
  return {
    packs: [...gatePacks(), ...recordPacks()].map((p) => ({ ...p.manifest, manifest_digest: p.digest })),
    manifest_digest_rule: 'manifest_digest = lowercase hex SHA-256 of the RFC 8785 (JCS) bytes of the pack entry without manifest_digest',
    // interface-spec Limits "Credit basis" and metering/credits.ts: the rule callers can predict their bill with.
    metering: {
      usage_unit: 'credits',
      cents_per_credit: CENTS_PER_CREDIT,
      bytes_per_token: BYTES_PER_TOKEN,
      tokens_per_block: TOKENS_PER_BLOCK,
      max_credits_per_action: MAX_CREDITS_PER_ACTION,
      token_estimate: `estimated_tokens = ceil(bytes / ${BYTES_PER_TOKEN}), where bytes is the length of the RFC 8785 (JCS) UTF-8 form of the request body without idempotency_key`,
      credits: `credits = min(${MAX_CREDITS_PER_ACTION}, rate × max(1, ceil(estimated_tokens / ${TOKENS_PER_BLOCK})))`,
    },
    claim_boundary: CLAIM_BOUNDARY,
    // The law pack's engine (manifest engine.id law-core; interface-spec "What the service does" 2):
    // its classes, their patterns and limits, and its rules, beside the digest its seals commit.
    engines: {
      [LAW_RULESET.engine.id]: {
        version: LAW_RULESET.engine.version,
        rules_digest: LAW_RULES_DIGEST,
        rules_digest_rule: 'rules_digest = lowercase hex SHA-256 of the RFC 8785 (JCS) bytes of ruleset',
        ruleset: LAW_RULESET as unknown as Record<string, unknown>,
      },
    },
  };
}

export function packRoutes(_deps: RouteDeps) {
  const router = createRouter();
  const body = packList();
  router.use('/v1/packs', etag());

  const route = defineRoute({
    method: 'get',
    path: '/v1/packs',
    operationId: 'listPacks',
    tags: ['packs'],
    auth: 'public',
    summary: 'Every pack: exact required request fields, action and event types with defaults, rate and claim boundary',
    request: { query: z.object({}).strict() },
    responses: {
      200: jsonContent(PackList, 'The five gate packs and two record packs, each with its manifest digest'),
      304: { description: 'Not modified: If-None-Match matched the ETag (RFC 9110 §15.4.5)' },
    },
  });
  router.openapi(route, (c) => c.json(body, 200));
  return router;
}
