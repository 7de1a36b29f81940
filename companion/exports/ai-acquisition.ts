/**
 * GET /tenant/exports/ai-acquisition: a read model for US federal AI acquisition. It maps
 * what this service can show (packs, tenant policy, review routes, claim boundaries, evidence
 * coverage) onto the questions of OMB Memorandum M-25-22, "Driving Efficient Acquisition of
 * Artificial Intelligence in Government" (3 April 2025), which replaced M-24-18 and applies to
 * contracts awarded under solicitations issued on or after 1 October 2025.
 *
 * M-25-22 organises its requirements under three policies, cited here by name: (1) a
 * competitive American AI marketplace (interoperability, data portability, no vendor lock-in);
 * (2) safeguarding taxpayer dollars by tracking AI performance and managing risk (performance
 * monitoring, risk management, protecting government data and privacy under OMB Circular
 * A-130, intellectual property and data rights); (3) cross-functional engagement in
 * acquisition. High-impact AI risk practices are those of the companion memorandum M-25-21.
 *
 * Honest by construction: each question is answered only from stored evidence or a design
 * property of the service; what only the AI supplier or the agency can answer is named as a
 * gap with its owner. It is for owner review and is not an authorization decision or an
 * official approval (interface-spec What the service does 6).
 */
import { CLAIM_BOUNDARY } from '../packs/manifest.ts';
import { gatePacks, getPack } from '../packs/registry.ts';
import type { PolicyStore, PolicyVersionRow } from '../policy/store.ts';
import type { ExportInputs } from './inputs.ts';
import { asOf } from './inputs.ts';
import { OWNER_REVIEW_NOTICE } from './notice.ts';

export const MEMORANDUM = {
  id: 'M-25-22',
  title: 'Driving Efficient Acquisition of Artificial Intelligence in Government',
  issued: '2025-04-03',
  replaces: 'M-24-18',
  applies_to: 'Contracts awarded under solicitations issued on or after 2025-10-01 (covered agencies; not national security systems)',
} as const;

export type AnswerStatus = 'evidenced' | 'partially_evidenced' | 'not_evidenced' | 'outside_service_scope';

export interface Gap {
  code: string;
  question_id: string;
  /** Blocking: an acquisition review cannot close this question without it. */
  blocking: boolean;
  /** Who can close it: the tenant (owner of this service), the AI supplier, or the agency. */
  owner: 'tenant' | 'supplier' | 'agency';
  detail: string;
}

export interface Question {
  id: string;
  policy: string;
  question: string;
  status: AnswerStatus;
  answer: string;
  evidence: Record<string, unknown>;
}

const POLICY_MARKETPLACE = 'M-25-22 policy 1: competitive American AI marketplace';
const POLICY_TAXPAYER = 'M-25-22 policy 2: safeguarding taxpayer dollars (performance tracking, risk management)';
const POLICY_ENGAGEMENT = 'M-25-22 policy 3: cross-functional engagement';

export async function aiAcquisition(inputs: ExportInputs, policy: PolicyStore, validation: { passedKinds: readonly string[] }): Promise<Record<string, unknown>> {
  const { coverage, tenantId } = inputs;
  const gaps: Gap[] = [];
  const gap = (g: Gap) => gaps.push(g);
  const gateCoverage = coverage.packs.filter((p) => p.pack_kind === 'gate');
  const used = coverage.packs.filter((p) => p.records > 0);
  const gateDecisions = sumOutcomes(gateCoverage.map((p) => p.decisions_by_kind.gate ?? {}));
  const reviews = sumOutcomes(coverage.packs.map((p) => p.reviews));
  const overdue = reviews.overdue ?? 0;
  const anchored = coverage.packs.reduce((n, p) => n + p.anchoring.anchored, 0);

  // Tenant policy and the review routes it and the packs set, per gate pack.
  const gate = gatePacks();
  const currents: (PolicyVersionRow | undefined)[] = [];
  for (const p of gate) currents.push(await policy.current(tenantId, p.manifest.name));
  const packs = gate.map((p, i) => {
    const current = currents[i];
    const doc = current ? (JSON.parse(current.document) as { review_routes?: Record<string, string>; deny_action_types?: string[]; review_action_types?: string[]; allow_action_types?: string[] }) : undefined;
    const routes = new Set<string>([p.manifest.review_route, ...p.manifest.action_types.flatMap((a) => (a.review_route ? [a.review_route] : [])), ...Object.values(doc?.review_routes ?? {})]);
    return {
      pack: p.manifest.name,
      version: p.manifest.version,
      manifest_digest: p.digest,
      claim_boundary: p.manifest.claim_boundary,
      records: coverage.packs.find((c) => c.pack === p.manifest.name)?.records ?? 0,
      policy: current
        ? {
            version: current.version,
            digest: current.digest,
            allow_action_types: doc?.allow_action_types ?? [],
            deny_action_types: doc?.deny_action_types ?? [],
            review_action_types: doc?.review_action_types ?? [],
          }
        : null,
      review_routes: [...routes].sort(),
    };
  });
  const recordPacksUsed = used.filter((p) => p.pack_kind === 'record').map((p) => ({ pack: p.pack, claim_boundary: getPack(p.pack)?.manifest.claim_boundary ?? CLAIM_BOUNDARY, records_by_event_type: p.records_by_event_type }));

  const questions: Question[] = [];

  // Policy 2: performance tracking needs retained, checkable evidence of what the AI workflow did.
  questions.push({
    id: 'performance-monitoring',
    policy: POLICY_TAXPAYER,
    question: 'Is the AI workflow monitored after award, with retained evidence of what it proposed and what was decided?',
    status: coverage.records > 0 ? 'evidenced' : 'not_evidenced',
    answer: `${coverage.records} sealed records from ${coverage.first_recorded_at ?? '-'} to ${coverage.last_recorded_at ?? '-'}, each Ed25519-signed and verifiable offline.`,
    evidence: { records: coverage.records, gate_decisions: gateDecisions, summary: '/tenant/exports/records/summary', export: '/tenant/exports/records' },
  });
  if (coverage.records === 0) {
    gap({ code: 'no_sealed_evidence', question_id: 'performance-monitoring', blocking: true, owner: 'tenant', detail: 'No sealed records yet: route the AI workflow through the gate before an acquisition review.' });
  }
  if (anchored === 0 && coverage.records > 0) {
    gap({ code: 'not_yet_anchored', question_id: 'performance-monitoring', blocking: false, owner: 'tenant', detail: 'No record is anchored in a closed roll-up epoch yet; seals verify on their own, inclusion proofs follow each hourly epoch.' });
  }

  // Policy 2 (risk management; M-25-21 minimum practices for high-impact AI): risky actions gated before they happen, humans decide.
  const gateUsed = gateCoverage.some((p) => p.records > 0);
  questions.push({
    id: 'risk-management-and-human-review',
    policy: POLICY_TAXPAYER,
    question: 'Are risky AI actions stopped or routed to a human reviewer before they take effect, and are the reviews decided?',
    status: !gateUsed ? 'not_evidenced' : overdue > 0 ? 'partially_evidenced' : 'evidenced',
    answer: `Gate decisions: ${fmt(gateDecisions)}. Reviews: ${fmt(reviews)}.`,
    evidence: { gate_decisions: gateDecisions, reviews, review_routes: [...new Set(packs.flatMap((p) => p.review_routes))].sort() },
  });
  if (!gateUsed) gap({ code: 'no_gate_decisions', question_id: 'risk-management-and-human-review', blocking: true, owner: 'tenant', detail: 'No gate decision has been sealed: no evidence that actions are gated.' });
  if (overdue > 0) {
    gap({ code: 'overdue_reviews', question_id: 'risk-management-and-human-review', blocking: true, owner: 'tenant', detail: `${overdue} paused actions outlived their review window unanswered (they fail closed).` });
  }

  // Tenant policy: the owner's own allow lists, hard denies and required review routes.
  const withPolicy = packs.filter((p) => p.policy !== null);
  const usedWithoutPolicy = packs.filter((p) => p.records > 0 && p.policy === null).map((p) => p.pack);
  questions.push({
    id: 'tenant-policy',
    policy: POLICY_ENGAGEMENT,
    question: "Has the agency's owner set its own policy (allow lists, hard denies, required review routes) on top of the pack defaults?",
    status: withPolicy.length === 0 ? 'not_evidenced' : usedWithoutPolicy.length > 0 ? 'partially_evidenced' : 'evidenced',
    answer: withPolicy.length === 0 ? 'Only pack defaults apply.' : `Tenant policy versions exist for ${withPolicy.map((p) => `${p.pack} v${p.policy!.version}`).join(', ')}.`,
    evidence: { packs_with_policy: withPolicy.map((p) => ({ pack: p.pack, version: p.policy!.version, digest: p.policy!.digest })), receipts: '/tenant/policy/receipts' },
  });
  if (usedWithoutPolicy.length > 0) {
    gap({ code: 'pack_defaults_only', question_id: 'tenant-policy', blocking: false, owner: 'tenant', detail: `Packs in use without a tenant policy: ${usedWithoutPolicy.join(', ')}.` });
  }

  // Policy 2 (protecting government data and privacy, OMB Circular A-130): the service stores no raw content.
  questions.push({
    id: 'government-data-and-privacy',
    policy: POLICY_TAXPAYER,
    question: 'Does the tool keep non-public government data, prompts or documents?',
    status: 'evidenced',
    answer: 'The service stores hash commitments only: raw prompt, document, key or secret material is rejected at the edge and never stored; every record response repeats this in payload_retention.',
    evidence: { design: 'interface-spec "What the service does" 7 (raw-safe storage)', check: 'each exported record carries only payload_hash, never the payload' },
  });
  gap({
    code: 'supplier_training_data_terms',
    question_id: 'government-data-and-privacy',
    blocking: true,
    owner: 'supplier',
    detail: 'Whether the AI model supplier may train on agency data is a contract term between the agency and that supplier; this service cannot evidence it.',
  });

  // Policy 1: interoperability and portability, so the agency is not locked in to one vendor.
  const standards = ['RFC 8785 (JCS)', 'Ed25519 (RFC 8032)', 'RFC 9162 Merkle proofs', 'NIST OSCAL 1.2.1', 'DCAT-US 1.1', 'NDJSON'];
  const validated = ['oscal', 'data-catalog'].filter((k) => validation.passedKinds.includes(k));
  questions.push({
    id: 'interoperability-and-portability',
    policy: POLICY_MARKETPLACE,
    question: 'Can the evidence leave this vendor and be verified without it?',
    status: validated.length === 2 ? 'evidenced' : 'partially_evidenced',
    answer: `Every record exports with its seal and verifies offline from the published keys (svc-verify, sha256sum, openssl). Open formats: ${standards.join(', ')}. Documents with a passing validation run: ${validated.join(', ') || 'none'}.`,
    evidence: { standards, records_export: '/tenant/exports/records', verify_kit: '/v1/verify/kit', keys: '/.well-known/service-keys.json', validated_exports: validated },
  });
  if (validated.length < 2) {
    gap({ code: 'exports_not_validated', question_id: 'interoperability-and-portability', blocking: false, owner: 'tenant', detail: 'Run POST /tenant/exports/validation-runs for oscal and data-catalog; see GET /tenant/exports/validation-report.' });
  }

  // Claim boundaries: what the packs do and do not claim.
  questions.push({
    id: 'claim-boundaries',
    policy: POLICY_ENGAGEMENT,
    question: 'What does the service claim about the AI workflow, and what does it not claim?',
    status: 'evidenced',
    answer: CLAIM_BOUNDARY,
    evidence: { gate_packs: packs.map((p) => ({ pack: p.pack, claim_boundary: p.claim_boundary })), record_packs: recordPacksUsed },
  });

  // Production evidence: sandbox evidence must never be presented as production evidence (DESIGN.md §3).
  questions.push({
    id: 'production-evidence',
    policy: POLICY_TAXPAYER,
    question: "Is the evidence signed with the operator's production key?",
    status: inputs.tenantKind === 'production' ? 'evidenced' : 'not_evidenced',
    answer: inputs.tenantKind === 'production' ? 'Production tenant: seals use the production key.' : 'Sandbox tenant: seals carry dev_key:true and must never be presented as production evidence.',
    evidence: { tenant_kind: inputs.tenantKind, keys: '/.well-known/service-keys.json' },
  });
  if (inputs.tenantKind !== 'production') {
    gap({ code: 'sandbox_evidence', question_id: 'production-evidence', blocking: true, owner: 'tenant', detail: 'Sandbox evidence is signed with the public dev key; upgrade to a production tenant.' });
  }

  // What only the supplier or the agency can answer.
  for (const q of OUTSIDE_SCOPE) {
    questions.push({ id: q.id, policy: q.policy, question: q.question, status: 'outside_service_scope', answer: q.answer, evidence: {} });
    gap({ code: q.gap, question_id: q.id, blocking: true, owner: q.owner, detail: q.answer });
  }

  return {
    notice: OWNER_REVIEW_NOTICE,
    tenant_id: tenantId,
    as_of: asOf(inputs),
    memorandum: MEMORANDUM,
    packs,
    questions,
    blocking_gaps: gaps.filter((g) => g.blocking),
    other_gaps: gaps.filter((g) => !g.blocking),
  };
}

const OUTSIDE_SCOPE = [
  {
    id: 'model-documentation',
    policy: POLICY_TAXPAYER,
    question: 'Has the AI supplier documented the model: performance, known limitations, evaluation?',
    answer: 'Model documentation comes from the AI model supplier; this service gates actions and does not evaluate models.',
    gap: 'supplier_model_documentation',
    owner: 'supplier' as const,
  },
  {
    id: 'intellectual-property-and-data-rights',
    policy: POLICY_TAXPAYER,
    question: 'Are the agency’s rights in its data, and the contractor’s IP, set out in the contract?',
    answer: 'IP and data-rights terms are set in the agency’s contract; this service holds only hash commitments of agency data.',
    gap: 'contract_data_rights_terms',
    owner: 'agency' as const,
  },
  {
    id: 'american-ai-preference',
    policy: POLICY_MARKETPLACE,
    question: 'Does the acquisition give preference to AI products and services developed and produced in the United States?',
    answer: 'Origin of the AI products in the workflow is a market-research and evaluation matter for the agency.',
    gap: 'agency_market_research',
    owner: 'agency' as const,
  },
];

function sumOutcomes(rows: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) for (const [k, n] of Object.entries(r)) out[k] = (out[k] ?? 0) + n;
  return out;
}

const fmt = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || 'none';
