/**
 * GET /tenant/exports/oscal: the tenant's evidence as an OSCAL 1.2.1 assessment-results
 * document (NIST OSCAL Assessment Results model), valid against NIST's
 * oscal_complete_schema.json (schemas/oscal-1.2.1/, profile oscal-1.2.1-complete).
 *
 * Mapping: one result covering the whole log; per pack with evidence an observation
 * (method EXAMINE: sealed records were examined) whose relevant-evidence links the newest
 * evidence packets and the full records export; per pack a finding on the objective
 * "<pack>-evidence-coverage". The pack manifests, which say what each gate checks, stand in
 * for an assessment plan: import-ap points at a back-matter resource linking GET /v1/packs.
 *
 * A finding's "satisfied" means only that sealed evidence exists and no paused action has
 * outlived its review window. It is for owner review and is not an authorization decision
 * (interface-spec What the service does 6); the document says so in its remarks.
 */
import { getPack } from '../packs/registry.ts';
import type { PackCoverage } from './coverage.ts';
import type { ExportInputs } from './inputs.ts';
import { asOf } from './inputs.ts';
import { OWNER_REVIEW_NOTICE } from './notice.ts';
import { uuidV5 } from './uuid-v5.ts';

export const OSCAL_VERSION = '1.2.1';
/** Namespace of our OSCAL props (OSCAL: a prop outside NIST's names must carry an ns). */
export const OSCAL_PROP_NS = 'urn:service:action-gate:oscal';

type Json = Record<string, unknown>;

export function oscalAssessmentResults(inputs: ExportInputs): Json {
  const { tenantId, coverage } = inputs;
  const at = asOf(inputs);
  const id = (what: string) => uuidV5(`svc-oscal:${tenantId}:${what}`);
  const planId = id('assessment-plan:pack-manifests');
  const withEvidence = coverage.packs.filter((p) => p.records > 0);
  const observationId = (pack: string) => id(`observation:${pack}:${at}`);

  const observations = withEvidence.map((p) => observation(p, inputs, observationId(p.pack)));
  const findings = coverage.packs.map((p) => finding(p, id(`finding:${p.pack}:${at}`), p.records > 0 ? observationId(p.pack) : undefined));

  const result: Json = {
    uuid: id(`result:${at}`),
    title: 'Action Gate evidence coverage',
    description: `Sealed evidence of tenant ${tenantId} from ${coverage.first_recorded_at ?? 'the start'} to ${at}: ${coverage.records} records. ${OWNER_REVIEW_NOTICE}`,
    start: coverage.first_recorded_at ?? at,
    end: at,
    'reviewed-controls': {
      description: 'Each pack manifest (GET /v1/packs) is the set of checks a gate applies; every pack is in scope.',
      'control-selections': [{ description: 'All pack objectives', 'include-all': {} }],
    },
    ...(observations.length > 0 ? { observations } : {}),
    findings,
    remarks: OWNER_REVIEW_NOTICE,
  };

  return {
    'assessment-results': {
      uuid: id(`assessment-results:${at}:${coverage.records}`),
      metadata: {
        title: `Action Gate evidence for ${inputs.tenantName}`,
        'last-modified': at,
        version: `evidence-through-${at}`,
        'oscal-version': OSCAL_VERSION,
        props: [
          { name: 'tenant-id', ns: OSCAL_PROP_NS, value: tenantId },
          { name: 'tenant-kind', ns: OSCAL_PROP_NS, value: inputs.tenantKind },
        ],
        remarks: `${OWNER_REVIEW_NOTICE}${inputs.tenantKind === 'sandbox' ? ' Sandbox evidence is signed with the public dev key and is never production evidence.' : ''}`,
      },
      'import-ap': { href: `#${planId}` },
      results: [result],
      'back-matter': {
        resources: [
          {
            uuid: planId,
            title: 'Pack manifests (the checks each gate applies)',
            description: 'Every pack manifest with its SHA-256 digest; each seal commits the manifest_digest it was made under.',
            rlinks: [{ href: '/v1/packs', 'media-type': 'application/json' }],
          },
        ],
      },
    },
  };
}

function observation(p: PackCoverage, inputs: ExportInputs, uuid: string): Json {
  const recent = inputs.recent.get(p.pack) ?? [];
  const outcomes = Object.entries(p.decisions_by_kind)
    .map(([kind, counts]) => `${kind}: ${Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(', ')}`)
    .join('; ');
  return {
    uuid,
    title: `${p.pack} evidence`,
    description: `${p.records} sealed records (${outcomes}). ${p.anchoring.anchored} anchored in a closed epoch, ${p.anchoring.not_yet_anchored} not yet.`,
    props: [
      { name: 'sealed-records', ns: OSCAL_PROP_NS, value: String(p.records) },
      { name: 'anchored-records', ns: OSCAL_PROP_NS, value: String(p.anchoring.anchored) },
    ],
    methods: ['EXAMINE'],
    'relevant-evidence': [
      {
        href: `/tenant/exports/records?from=${encodeURIComponent(p.first_recorded_at!)}`,
        description: `Every sealed record, each with its seal and a ready verify request (filter by pack ${p.pack}).`,
      },
      ...recent.map((r) => ({
        href: `/${r.vertical}/evidence-packets/${r.actionKey}`,
        description: `Evidence packet of ${r.kind} record ${r.actionKey}, recorded at ${r.recordedAt}; verify with POST /v1/verify or offline.`,
      })),
    ],
    collected: p.last_recorded_at!,
  };
}

function finding(p: PackCoverage, uuid: string, observationUuid: string | undefined): Json {
  const openOverdue = p.reviews.overdue;
  const satisfied = p.records > 0 && openOverdue === 0;
  const why =
    p.records === 0
      ? 'No sealed evidence from this pack yet.'
      : openOverdue > 0
        ? `${openOverdue} paused actions outlived their review window (they fail closed).`
        : 'Sealed evidence exists and no paused action outlived its review window.';
  const manifest = getPack(p.pack)?.manifest;
  return {
    uuid,
    title: `${p.pack} pack: evidence coverage`,
    description: `${why} ${manifest?.claim_boundary ?? ''}`.trim(),
    target: {
      type: 'objective-id',
      'target-id': `${p.pack}-evidence-coverage`,
      status: { state: satisfied ? 'satisfied' : 'not-satisfied', reason: satisfied ? 'pass' : p.records === 0 ? 'other' : 'fail' },
    },
    ...(observationUuid ? { 'related-observations': [{ 'observation-uuid': observationUuid }] } : {}),
  };
}
