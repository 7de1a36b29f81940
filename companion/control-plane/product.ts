/**
 * The product family of maps: what this build offers and what it is built from.
 *
 *   /product-map    capabilities = the OpenAPI document's tags, each with the operations that
 *                   carry it (method, path, operationId, auth from its security requirement);
 *                   the packs from the pack registry (companion/packs/registry.ts)
 *   /vertical-packs the gate and record packs' manifests, summarised: digest, rate, required
 *                   fields, action or event types with their defaults and review routes
 *   /pack-registry  every registered pack with its manifest digest and field lists, and one
 *                   registry digest over the (name, digest) pairs, so two deployments can tell
 *                   at a glance whether they run the same rules
 *   /catalog-map    the catalog_refs atoms a gate response can carry (gate/decide.ts builds
 *                   them from these same manifests), each with the packs that emit it
 *   /corpus-map     the sources the rules rest on: every citation in the manifests, the law
 *                   engine's ruleset digest, the law grading mirror rubric and the official
 *                   export schema profiles with their digests
 */
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import { API_VERSION, TAGS } from '../core/openapi.ts';
import type { OpenApiDocument } from '../core/openapi.ts';
import { z } from '../core/router.ts';
import { SERVICE_VERSION } from '../core/version.ts';
import { SCHEMA_PROFILES, profileDigest } from '../exports/schema-profiles.ts';
import { LAW_RULES } from '../packs/law-ruleset/rules.ts';
import { LAW_RULES_DIGEST, LAW_RULESET } from '../packs/law-ruleset/ruleset.ts';
import { CENTS_PER_CREDIT, MAX_CREDITS_PER_ACTION, TOKENS_PER_BLOCK } from '../metering/credits.ts';
import { CLAIM_BOUNDARY } from '../packs/manifest.ts';
import type { GateManifest, PackManifest, RecordManifest } from '../packs/manifest.ts';
import { gatePacks, recordPacks } from '../packs/registry.ts';
import type { RegisteredPack } from '../packs/registry.ts';
import { MIRROR_DIGEST, MIRROR_KEYS, MIRROR_VERSION } from '../reviews/mirror.ts';
import { operations } from './sources.ts';

const Digest = z.string().regex(/^[0-9a-f]{64}$/);
const AuthKind = z.enum(['public', 'api_key', 'account_session', 'metrics_token', 'signed_request']);
const OperationSchema = z.object({ method: z.string(), path: z.string(), operation_id: z.string(), summary: z.string(), auth: AuthKind });

const allPacks = (): RegisteredPack[] => [...gatePacks(), ...recordPacks()];

export const ProductMap = z
  .object({
    service: z.object({ title: z.string(), api_version: z.string(), service_version: z.string(), openapi: z.string() }),
    capabilities: z.array(z.object({ name: z.string(), description: z.string(), endpoints: z.array(OperationSchema) })),
    packs: z.object({ gate: z.array(z.string()), record: z.array(z.string()) }),
    totals: z.object({ capabilities: z.number().int(), endpoints: z.number().int(), public_endpoints: z.number().int() }),
    claim_boundary: z.string(),
  })
  .openapi('ProductMap');

export function productMap(document: OpenApiDocument): z.infer<typeof ProductMap> {
  const ops = operations(document);
  const capabilities = TAGS.map((tag) => ({
    name: tag.name,
    description: tag.description,
    endpoints: ops.filter((o) => o.tags.includes(tag.name)).map(({ tags: _tags, ...o }) => o),
  })).filter((c) => c.endpoints.length > 0);
  return {
    service: { title: document.info.title, api_version: API_VERSION, service_version: SERVICE_VERSION, openapi: '/openapi.json' },
    capabilities,
    packs: { gate: gatePacks().map((p) => p.manifest.name), record: recordPacks().map((p) => p.manifest.name) },
    totals: { capabilities: capabilities.length, endpoints: ops.length, public_endpoints: ops.filter((o) => o.auth === 'public').length },
    claim_boundary: CLAIM_BOUNDARY,
  };
}

export const VerticalPacks = z
  .object({
    gate_packs: z.array(
      z.object({
        name: z.string(),
        title: z.string(),
        summary: z.string(),
        version: z.string(),
        manifest_digest: Digest,
        engine: z.string(),
        rate: z.number().int(),
        endpoints: z.array(z.string()),
        required_fields: z.array(z.string()),
        review_route: z.string(),
        action_types: z.array(z.object({ id: z.string(), title: z.string(), default_decision: z.string(), review_route: z.string().nullable() })),
        rules: z.number().int(),
        claim_boundary: z.string(),
      }),
    ),
    record_packs: z.array(
      z.object({
        name: z.string(),
        title: z.string(),
        version: z.string(),
        manifest_digest: Digest,
        regulation: z.object({ name: z.string(), citation: z.string() }),
        rate: z.number().int(),
        endpoints: z.array(z.string()),
        required_fields: z.array(z.string()),
        event_types: z.array(z.object({ id: z.string(), title: z.string(), required_digests: z.array(z.string()) })),
      }),
    ),
    manifests: z.string(),
  })
  .openapi('VerticalPacks');

export function verticalPacks(): z.infer<typeof VerticalPacks> {
  return {
    gate_packs: gatePacks().map(({ manifest: m, digest }) => ({
      name: m.name,
      title: m.title,
      summary: m.summary,
      version: m.version,
      manifest_digest: digest,
      engine: `${m.engine.id}@${m.engine.version}`,
      rate: m.rate,
      endpoints: [...m.endpoints],
      required_fields: [...m.required_fields],
      review_route: m.review_route,
      action_types: m.action_types.map((a) => ({ id: a.id, title: a.title, default_decision: a.default_decision, review_route: a.review_route })),
      rules: m.rules.length,
      claim_boundary: m.claim_boundary,
    })),
    record_packs: recordPacks().map(({ manifest: m, digest }) => ({
      name: m.name,
      title: m.title,
      version: m.version,
      manifest_digest: digest,
      regulation: { ...m.regulation },
      rate: m.rate,
      endpoints: [...m.endpoints],
      required_fields: [...m.required_fields],
      event_types: m.event_types.map((e) => ({ id: e.id, title: e.title, required_digests: [...e.source_payload.required] })),
    })),
    manifests: '/v1/packs',
  };
}

export const PackRegistry = z
  .object({
    registry_digest: Digest,
    registry_digest_rule: z.string(),
    packs: z.array(
      z.object({
        name: z.string(),
        kind: z.enum(['gate', 'record']),
        version: z.string(),
        manifest_digest: Digest,
        rate: z.number().int(),
        required_fields: z.array(z.string()),
        optional_fields: z.array(z.string()),
      }),
    ),
    engines: z.array(z.object({ id: z.string(), version: z.string(), rules_digest: Digest })),
    pricing: z.object({ cents_per_credit: z.number().int(), tokens_per_block: z.number().int(), max_credits_per_action: z.number().int() }),
  })
  .openapi('PackRegistry');

export function packRegistry(): z.infer<typeof PackRegistry> {
  const packs = allPacks();
  return {
    registry_digest: sha256Hex(canonicalBytes(packs.map((p) => ({ name: p.manifest.name, manifest_digest: p.digest })))),
    registry_digest_rule: 'lowercase hex SHA-256 of the RFC 8785 (JCS) bytes of the array [{name, manifest_digest}] in this listing order',
    packs: packs.map(({ manifest: m, digest }) => ({
      name: m.name,
      kind: m.kind,
      version: m.version,
      manifest_digest: digest,
      rate: m.rate,
      required_fields: [...m.required_fields],
      optional_fields: [...m.optional_fields],
    })),
    engines: [{ id: LAW_RULESET.engine.id, version: LAW_RULESET.engine.version, rules_digest: LAW_RULES_DIGEST }],
    pricing: { cents_per_credit: CENTS_PER_CREDIT, tokens_per_block: TOKENS_PER_BLOCK, max_credits_per_action: MAX_CREDITS_PER_ACTION },
  };
}

export const CatalogMap = z
  .object({
    atoms: z.array(z.object({ ref: z.string(), kind: z.string(), packs: z.array(z.string()) })),
    patterns: z.array(z.object({ pattern: z.string(), meaning: z.string() })),
  })
  .openapi('CatalogMap');

/** The atom's kind is its prefix: pack:law → pack. */
const atomKind = (ref: string) => ref.split(':', 1)[0]!;

/** The atoms gate/decide.ts adds per decision, beside each manifest's own catalog_refs. */
function decisionAtoms(m: GateManifest): string[] {
  return [
    ...m.action_types.map((a) => `action-type:${m.name}:${a.id}`),
    ...m.action_types.map((a) => `rule:${m.name}.default.${a.id}`),
    ...m.rules.map((r) => `rule:${r.id}`),
    // The law pack's rules live in its engine's ruleset (packs/law-ruleset/rules.ts).
    ...(m.engine.id === LAW_RULESET.engine.id ? LAW_RULES.map((r) => `rule:${r.id}`) : []),
    ...[m.review_route, ...m.action_types.map((a) => a.review_route), ...m.rules.map((r) => r.review_route)]
      .filter((r): r is string => typeof r === 'string')
      .map((r) => `route:${r}`),
  ];
}

export function catalogMap(): z.infer<typeof CatalogMap> {
  const emitters = new Map<string, Set<string>>();
  const add = (ref: string, pack: string) => {
    const set = emitters.get(ref) ?? new Set<string>();
    set.add(pack);
    emitters.set(ref, set);
  };
  for (const { manifest: m } of allPacks()) {
    for (const ref of m.catalog_refs) add(ref, m.name);
    if (m.kind === 'gate') for (const ref of decisionAtoms(m)) add(ref, m.name);
  }
  const atoms = [...emitters]
    .map(([ref, packs]) => ({ ref, kind: atomKind(ref), packs: [...packs].sort() }))
    .sort((a, b) => a.ref.localeCompare(b.ref));
  return {
    atoms,
    patterns: [
      { pattern: 'action-type:<pack>:<action_type>', meaning: 'the action type a gate decision was made for' },
      { pattern: 'rule:<rule id>', meaning: 'a pack rule, a pack default (<pack>.default.<action_type>) or a tenant policy entry (policy.allow|review|deny.<action_type>) that shaped the decision' },
      { pattern: 'route:<channel>:<target>', meaning: 'the review route a paused action waits on' },
      { pattern: 'policy:<digest>', meaning: 'the tenant policy version (its receipt digest) applied to the decision' },
    ],
  };
}

export const CorpusMap = z
  .object({
    citations: z.array(z.object({ citation: z.string(), used_by: z.array(z.string()) })),
    rulesets: z.array(z.object({ id: z.string(), version: z.string(), digest: Digest, published_at: z.string() })),
    rubrics: z.array(z.object({ id: z.string(), digest: Digest, dimensions: z.array(z.string()), published_at: z.string() })),
    schema_profiles: z.array(z.object({ key: z.string(), title: z.string(), export_kind: z.string(), digest: Digest, published_at: z.string() })),
  })
  .openapi('CorpusMap');

/** Every citation of a manifest, keyed by where it is used: <pack>:<action type|rule|event type>. */
function citationsOf(m: PackManifest): [string, string][] {
  if (m.kind === 'record') return (m as RecordManifest).event_types.flatMap((e) => e.citations.map((c): [string, string] => [c, `${m.name}:${e.id}`]));
  return [
    ...m.action_types.flatMap((a) => a.citations.map((c): [string, string] => [c, `${m.name}:${a.id}`])),
    ...m.rules.flatMap((r) => r.citations.map((c): [string, string] => [c, `${m.name}:${r.id}`])),
  ];
}

export function corpusMap(): z.infer<typeof CorpusMap> {
  const usedBy = new Map<string, Set<string>>();
  for (const { manifest } of allPacks()) {
    for (const [citation, use] of citationsOf(manifest)) usedBy.set(citation, (usedBy.get(citation) ?? new Set()).add(use));
  }
  return {
    citations: [...usedBy].map(([citation, uses]) => ({ citation, used_by: [...uses].sort() })).sort((a, b) => a.citation.localeCompare(b.citation)),
    rulesets: [{ id: LAW_RULESET.engine.id, version: LAW_RULESET.engine.version, digest: LAW_RULES_DIGEST, published_at: '/v1/packs' }],
    rubrics: [{ id: MIRROR_VERSION, digest: MIRROR_DIGEST, dimensions: [...MIRROR_KEYS], published_at: '/law/grading-mirror' }],
    schema_profiles: SCHEMA_PROFILES.map((p) => ({
      key: p.key,
      title: p.title,
      export_kind: p.exportKind,
      digest: profileDigest(p),
      published_at: `/tenant/exports/validation-schema-profiles/${p.key}`,
    })),
  };
}
