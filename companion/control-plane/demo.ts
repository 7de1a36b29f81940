/**
 * Demo fixtures: one sample request per pack, built from the pack's own manifest (its
 * required fields and each key's value spec, packs/values.ts), so every fixture is a body the
 * gate or record endpoint accepts as long as the manifest is what it is. Values are synthetic
 * placeholders only: the first allowed value of an enum, `demo-<key>` for an id, digests of
 * fixed demo strings (interface-spec "What the service does" 7: no raw content).
 *
 *   /demo-fixtures        the bodies, each with its endpoint and the pack's manifest digest
 *   /website-demo-export  the same fixtures packaged for a public website: the base URL
 *                         (sources.ts publicBaseUrl), the signup step, a curl line per fixture,
 *                         and where a visitor verifies the result
 */
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { sha256Hex } from '../../shared/hash.ts';
import type { Config } from '../core/config.ts';
import type { OpenApiDocument } from '../core/openapi.ts';
import { z } from '../core/router.ts';
import type { GateManifest, RecordManifest } from '../packs/manifest.ts';
import { gatePacks, recordPacks } from '../packs/registry.ts';
import type { KeySpec, ValueSpec } from '../packs/values.ts';
import { publicBaseUrl, serves } from './sources.ts';

/** A fixed instant, so fixtures are the same on every call (records need occurred_at). */
const DEMO_INSTANT = '2025-01-01T00:00:00Z';

function sampleValue(name: string, spec: ValueSpec): unknown {
  switch (spec.type) {
    case 'enum':
      return spec.values[0];
    case 'enum_list':
      return [spec.values[0]];
    case 'id':
      return `demo-${name.replace(/_/g, '-')}`.slice(0, spec.max_length);
    case 'id_list':
      return [`demo-${name.replace(/_/g, '-')}`.slice(0, spec.max_length)];
    case 'boolean':
      return false;
    case 'region':
      return 'US';
    case 'locale':
      return 'en';
    case 'timestamp':
      return DEMO_INSTANT;
  }
}

/** Every required key of a key-spec map, with its sample value. */
function sampleKeys(keys: Record<string, KeySpec>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(keys).filter(([, s]) => s.required).map(([k, s]) => [k, sampleValue(k, s.value)]));
}

export function gateFixture(m: GateManifest): Record<string, unknown> {
  const actionType = m.default_action_type ?? m.action_types[0]!.id;
  return {
    pack: m.name,
    proposed_action: `Demo: ${m.action_types.find((a) => a.id === actionType)!.title} (synthetic placeholder)`,
    ...(m.action_type_required ? { action_type: actionType } : {}),
    [m.context_field]: sampleKeys(m.context_keys),
    surface: 'demo',
  };
}

export function recordFixture(m: RecordManifest): Record<string, unknown> {
  const event = m.event_types[0]!;
  return {
    pack: m.name,
    event_type: event.id,
    occurred_at: DEMO_INSTANT,
    // Digests of fixed demo strings: the shape a caller sends, never content.
    source_payload: Object.fromEntries(event.source_payload.required.map((k) => [k, sha256Hex(canonicalBytes(`demo ${m.name} ${k}`))])),
    ...(Object.values(event.metadata).some((s) => s.required) ? { metadata: sampleKeys(event.metadata) } : {}),
  };
}

const Fixture = z.object({
  id: z.string(),
  pack: z.string(),
  kind: z.enum(['gate', 'record']),
  manifest_digest: z.string(),
  method: z.literal('POST'),
  path: z.string(),
  body: z.record(z.string(), z.unknown()),
});

export const DemoFixtures = z
  .object({ fixtures: z.array(Fixture), placeholder_rule: z.string(), auth: z.string() })
  .openapi('DemoFixtures');

export function demoFixtures(): z.infer<typeof DemoFixtures> {
  return {
    fixtures: [
      ...gatePacks().map((p) => ({ id: `gate-${p.manifest.name}`, pack: p.manifest.name, kind: 'gate' as const, manifest_digest: p.digest, method: 'POST' as const, path: '/v1/gate', body: gateFixture(p.manifest) })),
      ...recordPacks().map((p) => ({ id: `record-${p.manifest.name}`, pack: p.manifest.name, kind: 'record' as const, manifest_digest: p.digest, method: 'POST' as const, path: '/v1/record', body: recordFixture(p.manifest) })),
    ],
    placeholder_rule: 'every value is synthetic: the first allowed enum value, demo-<key> for ids, digests of fixed demo strings; nothing is real content',
    auth: 'a sandbox key from POST /signup/checkout (X-Service-Key); sandbox seals carry dev_key: true',
  };
}

export const WebsiteDemoExport = z
  .object({
    base_url: z.string(),
    signup: z.object({ method: z.literal('POST'), path: z.string(), served: z.boolean(), curl: z.string() }),
    steps: z.array(z.object({ id: z.string(), title: z.string(), curl: z.string() })),
    verify: z.object({ keys: z.string(), verify_kit: z.string(), proof_kit: z.string() }),
    fixtures_digest: z.string(),
  })
  .openapi('WebsiteDemoExport');

export function websiteDemoExport(config: Config, document: OpenApiDocument): z.infer<typeof WebsiteDemoExport> {
  const base = publicBaseUrl(config);
  const { fixtures } = demoFixtures();
  return {
    base_url: base,
    signup: {
      method: 'POST',
      path: '/signup/checkout',
      served: serves(document, 'POST', '/signup/checkout'),
      curl: `curl -sS ${base}/signup/checkout -H 'content-type: application/json' -d '{"email":"you@example.com"}'`,
    },
    steps: fixtures.map((f) => ({
      id: f.id,
      title: `${f.kind === 'gate' ? 'Gate' : 'Record'} a ${f.pack} demo action`,
      curl: `curl -sS ${base}${f.path} -H "X-Service-Key: $SVC_KEY" -H 'content-type: application/json' -d '${JSON.stringify(f.body)}'`,
    })),
    verify: { keys: '/.well-known/service-keys.json', verify_kit: '/v1/verify/kit', proof_kit: '/evidence-packets/proof-kit' },
    // Lets a website tell whether its copy of the fixtures is still this build's.
    fixtures_digest: sha256Hex(canonicalBytes(fixtures)),
  };
}
