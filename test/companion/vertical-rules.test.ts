/**
 * Decision tables for the manifest-backed verticals (interface-spec "What the service does"
 * 1–2): defense, medicine, education, us-regulatory. Each manifest lists its action types,
 * required context, the context conditions that block or route to review, a default review
 * route and its claim boundary; every rule has a case where it fires alone, conflicting rules
 * resolve blocked > needs_review > allow, and the manifest digest is committed in real seals.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { decide } from '../../companion/gate/decide.ts';
import { EMPTY_OVERLAY } from '../../companion/policy/policy-overlay.ts';
import type { PolicyOverlay } from '../../companion/policy/policy-overlay.ts';
import type { GateDecision } from '../../companion/gate/decide.ts';
import { CLAIM_BOUNDARY } from '../../companion/packs/manifest.ts';
import type { Decision, GatePackName } from '../../companion/packs/manifest.ts';
import { getGatePack } from '../../companion/packs/registry.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, QUIET_CONTEXT } from './pack-fixtures.ts';

type Vertical = Exclude<GatePackName, 'law'>;
const VERTICALS: Vertical[] = ['defense', 'medicine', 'education', 'us-regulatory'];

interface Case {
  name: string;
  action_type: string;
  context?: Record<string, unknown>;
  /** The pack rules that fire, in manifest order. */
  rules: string[];
  /** With the tenant allowlisting every action type, so only the rules speak. */
  decision: Decision;
  route?: string;
}

const TABLES: Record<Vertical, Case[]> = {
  defense: [
    { name: 'CUI to a commercial cloud tool', action_type: 'cui-handling', context: { data_marking: 'cui', tool_boundary: 'commercial-cloud' }, rules: ['defense.cui.external-boundary'], decision: 'blocked' },
    {
      name: 'ITAR data to a foreign person, no license',
      action_type: 'technical-data-transfer',
      context: { data_marking: 'itar', recipient_foreign_person: true, export_authorization: 'none' },
      rules: ['defense.export.foreign-person-unlicensed'],
      decision: 'blocked',
    },
    {
      name: 'ITAR data to a foreign person under a TAA',
      action_type: 'technical-data-transfer',
      context: { data_marking: 'itar', recipient_foreign_person: true, export_authorization: 'license-or-agreement' },
      rules: ['defense.export.foreign-person-licensed'],
      decision: 'needs_review',
      route: 'workflow:export-control',
    },
    {
      name: 'EAR data in a FedRAMP Moderate cloud',
      action_type: 'export-controlled-summary',
      context: { data_marking: 'ear', tool_boundary: 'fedramp-moderate-cloud' },
      rules: ['defense.export.us-persons-only-boundary'],
      decision: 'needs_review',
      route: 'workflow:export-control',
    },
    {
      name: 'FCI in an external AI service (pack default route)',
      action_type: 'proposal-draft',
      context: { data_marking: 'fci', tool_boundary: 'external-ai-service' },
      rules: ['defense.fci.external-service-review'],
      decision: 'needs_review',
      route: 'workflow:security-office',
    },
    {
      name: 'competitor proposal information in a proposal draft',
      action_type: 'proposal-draft',
      context: { procurement_information: 'competitor-proprietary' },
      rules: ['defense.procurement.integrity-information'],
      decision: 'blocked',
    },
    { name: 'incident report, whatever the tenant allows', action_type: 'incident-report-draft', rules: ['defense.incident.authorized-submitter'], decision: 'needs_review', route: 'workflow:security-office' },
    // conflicts
    {
      name: 'conflict: ITAR to an external AI service and a foreign person',
      action_type: 'export-controlled-summary',
      context: { data_marking: 'itar', tool_boundary: 'external-ai-service', recipient_foreign_person: true },
      rules: ['defense.cui.external-boundary', 'defense.export.foreign-person-unlicensed'],
      decision: 'blocked',
    },
    {
      name: 'conflict: licensed foreign release from a Moderate cloud (both reviews, first rule routes)',
      action_type: 'technical-data-transfer',
      context: { data_marking: 'itar', tool_boundary: 'fedramp-moderate-cloud', recipient_foreign_person: true, export_authorization: 'exemption' },
      rules: ['defense.export.foreign-person-licensed', 'defense.export.us-persons-only-boundary'],
      decision: 'needs_review',
      route: 'workflow:export-control',
    },
    {
      name: 'conflict: incident report from a commercial cloud tool blocks',
      action_type: 'incident-report-draft',
      context: { data_marking: 'cui-specified', tool_boundary: 'commercial-cloud' },
      rules: ['defense.cui.external-boundary', 'defense.incident.authorized-submitter'],
      decision: 'blocked',
    },
    { name: 'unknown authorization counts as none', action_type: 'technical-data-transfer', context: { data_marking: 'ear', recipient_foreign_person: true, export_authorization: 'unknown' }, rules: ['defense.export.foreign-person-unlicensed'], decision: 'blocked' },
    { name: 'quiet: export data to a U.S. person on premises', action_type: 'technical-data-transfer', context: { data_marking: 'itar', recipient_foreign_person: false }, rules: [], decision: 'allow' },
  ],
  medicine: [
    { name: 'PHI to a tool with unknown BAA', action_type: 'clinical-note-draft', context: { phi_involved: true, tool_baa_status: 'unknown' }, rules: ['medicine.hipaa.phi-to-tool-without-baa'], decision: 'blocked' },
    { name: 'psychotherapy notes to a payer', action_type: 'prior-authorization-draft', context: { record_sensitivity: 'psychotherapy-notes' }, rules: ['medicine.hipaa.psychotherapy-notes-disclosure'], decision: 'blocked' },
    {
      name: 'Part 2 records to a payer',
      action_type: 'prior-authorization-draft',
      context: { record_sensitivity: 'sud-part2' },
      rules: ['medicine.part2.sud-record-disclosure'],
      decision: 'needs_review',
      route: 'workflow:privacy-office',
    },
    {
      name: 'behavioral health export',
      action_type: 'phi-export',
      context: { care_setting: 'behavioral-health' },
      rules: ['medicine.part2.behavioral-health-export'],
      decision: 'needs_review',
      route: 'workflow:privacy-office',
    },
    {
      name: 'genetic results export',
      action_type: 'phi-export',
      context: { record_sensitivity: 'genetic' },
      rules: ['medicine.state-law.special-category-export'],
      decision: 'needs_review',
      route: 'workflow:privacy-office',
    },
    {
      name: 'research PHI export',
      action_type: 'phi-export',
      context: { care_setting: 'research', phi_involved: true },
      rules: ['medicine.research.phi-export'],
      decision: 'needs_review',
      route: 'workflow:irb-privacy-board',
    },
    { name: 'order suggestion (action type route)', action_type: 'order-suggestion', rules: ['medicine.cds.clinician-places-order'], decision: 'needs_review', route: 'browser:ordering-clinician' },
    {
      name: 'message about a child (pack default route)',
      action_type: 'patient-message',
      context: { patient_age_band: 'pediatric' },
      rules: ['medicine.minor.patient-message'],
      decision: 'needs_review',
      route: 'browser:clinical-review',
    },
    // conflicts
    {
      name: 'conflict: Part 2 behavioral health export to a tool without a BAA',
      action_type: 'phi-export',
      context: { care_setting: 'behavioral-health', record_sensitivity: 'sud-part2', phi_involved: true, tool_baa_status: 'no-baa' },
      rules: ['medicine.hipaa.phi-to-tool-without-baa', 'medicine.part2.sud-record-disclosure', 'medicine.part2.behavioral-health-export'],
      decision: 'blocked',
    },
    {
      name: 'conflict: psychotherapy notes export from behavioral health',
      action_type: 'phi-export',
      context: { care_setting: 'behavioral-health', record_sensitivity: 'psychotherapy-notes' },
      rules: ['medicine.hipaa.psychotherapy-notes-disclosure', 'medicine.part2.behavioral-health-export'],
      decision: 'blocked',
    },
    {
      name: 'conflict: HIV status in a research export (first reviewing rule routes)',
      action_type: 'phi-export',
      context: { care_setting: 'research', phi_involved: true, record_sensitivity: 'hiv-status' },
      rules: ['medicine.state-law.special-category-export', 'medicine.research.phi-export'],
      decision: 'needs_review',
      route: 'workflow:privacy-office',
    },
    { name: 'quiet: sensitive record in a note that stays inside', action_type: 'clinical-note-draft', context: { record_sensitivity: 'psychotherapy-notes' }, rules: [], decision: 'allow' },
  ],
  education: [
    {
      name: 'education records to a tool without an agreement',
      action_type: 'grade-feedback-draft',
      context: { student_data_class: 'education-record', tool_data_agreement: 'none' },
      rules: ['education.ferpa.records-to-tool-without-agreement'],
      decision: 'blocked',
    },
    {
      name: 'directory information of an opted-out student',
      action_type: 'student-record-disclosure',
      context: { student_data_class: 'directory', directory_opt_out: true },
      rules: ['education.ferpa.directory-opt-out'],
      decision: 'blocked',
    },
    {
      name: 'grades posted publicly',
      action_type: 'grade-feedback-draft',
      context: { student_data_class: 'education-record', recipient: 'public' },
      rules: ['education.ferpa.public-disclosure'],
      decision: 'blocked',
    },
    {
      name: 'records to a third party',
      action_type: 'student-record-disclosure',
      context: { student_data_class: 'education-record', recipient: 'third-party' },
      rules: ['education.ferpa.third-party-disclosure'],
      decision: 'needs_review',
      route: 'workflow:records-office',
    },
    {
      name: 'college records to a parent',
      action_type: 'parent-communication',
      context: { institution_level: 'higher-ed', student_data_class: 'education-record', recipient: 'parent-or-guardian' },
      rules: ['education.ferpa.eligible-student-parent'],
      decision: 'needs_review',
      route: 'workflow:records-office',
    },
    {
      name: 'under-13 students, no agreement (pack default route)',
      action_type: 'lesson-material-draft',
      context: { student_age_band: 'under-13', tool_data_agreement: 'unknown' },
      rules: ['education.coppa.under-13-without-agreement'],
      decision: 'needs_review',
      route: 'browser:education-review',
    },
    { name: 'IEP draft (action type route)', action_type: 'iep-document-draft', rules: ['education.idea.iep-team-decides'], decision: 'needs_review', route: 'browser:special-education' },
    { name: 'final grade', action_type: 'grade-feedback-draft', context: { grade_stakes: 'final' }, rules: ['education.grading.final-grade'], decision: 'needs_review', route: 'browser:education-review' },
    // conflicts
    {
      name: 'conflict: third-party disclosure through a tool without an agreement',
      action_type: 'student-record-disclosure',
      context: { student_data_class: 'education-record', tool_data_agreement: 'none', recipient: 'third-party' },
      rules: ['education.ferpa.records-to-tool-without-agreement', 'education.ferpa.third-party-disclosure'],
      decision: 'blocked',
    },
    {
      name: 'conflict: IEP of a young child in a tool without an agreement',
      action_type: 'iep-document-draft',
      context: { student_data_class: 'education-record', tool_data_agreement: 'unknown', student_age_band: 'under-13' },
      rules: ['education.ferpa.records-to-tool-without-agreement', 'education.coppa.under-13-without-agreement', 'education.idea.iep-team-decides'],
      decision: 'blocked',
    },
    {
      name: 'conflict: a final grade for under-13s without an agreement (both reviews)',
      action_type: 'grade-feedback-draft',
      context: { grade_stakes: 'final', student_age_band: 'under-13', tool_data_agreement: 'none' },
      rules: ['education.coppa.under-13-without-agreement', 'education.grading.final-grade'],
      decision: 'needs_review',
      route: 'browser:education-review',
    },
    { name: 'quiet: directory information, no opt-out', action_type: 'student-record-disclosure', context: { student_data_class: 'directory', directory_opt_out: false }, rules: [], decision: 'allow' },
  ],
  'us-regulatory': [
    {
      name: 'certified compliance report (action type route)',
      action_type: 'compliance-report-draft',
      context: { signatory_certification: true },
      rules: ['us-regulatory.certification.human-signatory'],
      decision: 'needs_review',
      route: 'workflow:regulatory-affairs',
    },
    { name: 'comment in the name of someone who did not authorize it', action_type: 'public-comment-draft', context: { submitter_authorization: 'not-authorized' }, rules: ['us-regulatory.identity.not-authorized'], decision: 'blocked' },
    {
      name: 'comment with unconfirmed authorization (pack default route)',
      action_type: 'public-comment-draft',
      context: { submitter_authorization: 'unknown' },
      rules: ['us-regulatory.identity.unconfirmed'],
      decision: 'needs_review',
      route: 'browser:regulatory-review',
    },
    { name: 'CBI on a public docket', action_type: 'public-comment-draft', context: { contains_cbi: true }, rules: ['us-regulatory.cbi.public-docket'], decision: 'blocked' },
    {
      name: 'CBI by email',
      action_type: 'agency-correspondence',
      context: { contains_cbi: true, submission_channel: 'email' },
      rules: ['us-regulatory.cbi.marking-check'],
      decision: 'needs_review',
      route: 'browser:regulatory-review',
    },
    {
      name: 'EDGAR filing',
      action_type: 'regulatory-filing',
      context: { agency: 'SEC', submission_channel: 'edgar' },
      rules: ['us-regulatory.edgar.authorized-filer'],
      decision: 'needs_review',
      route: 'workflow:regulatory-affairs',
    },
    // conflicts
    {
      name: 'conflict: certified comment with CBI on a public docket, submitter unconfirmed',
      action_type: 'public-comment-draft',
      context: { signatory_certification: true, submitter_authorization: 'unknown', contains_cbi: true },
      rules: ['us-regulatory.certification.human-signatory', 'us-regulatory.identity.unconfirmed', 'us-regulatory.cbi.public-docket'],
      decision: 'blocked',
    },
    {
      name: 'conflict: certified EDGAR filing with CBI (three reviews)',
      action_type: 'regulatory-filing',
      context: { agency: 'SEC', submission_channel: 'edgar', signatory_certification: true, contains_cbi: true },
      rules: ['us-regulatory.certification.human-signatory', 'us-regulatory.cbi.marking-check', 'us-regulatory.edgar.authorized-filer'],
      decision: 'needs_review',
      route: 'workflow:regulatory-affairs',
    },
    { name: 'quiet: the submitter’s own comment', action_type: 'public-comment-draft', context: { submitter_authorization: 'self', contains_cbi: false }, rules: [], decision: 'allow' },
  ],
};

const packRules = (d: GateDecision) => d.context.findings.filter((f) => f.source === 'pack' && !f.rule.includes('.default.')).map((f) => f.rule);
const allowAll = (name: Vertical): PolicyOverlay => ({ ...EMPTY_OVERLAY, allow_action_types: getGatePack(name).manifest.action_types.map((a) => a.id) });
const RANK: Record<Decision, number> = { allow: 0, needs_review: 1, blocked: 2 };

describe.each(VERTICALS)('%s decision table', (name) => {
  const pack = getGatePack(name);
  const m = pack.manifest;
  const run = (c: Case, overlay: PolicyOverlay) => decide(pack, { action_type: c.action_type, context: { ...QUIET_CONTEXT[name], ...c.context } }, overlay);

  it('has a case where each rule fires alone, and a conflict case', () => {
    const alone = new Set(TABLES[name].filter((c) => c.rules.length === 1).map((c) => c.rules[0]));
    expect([...alone].sort()).toEqual(m.rules.map((r) => r.id).sort());
    expect(TABLES[name].some((c) => c.rules.length > 1 && c.decision === 'blocked' && c.rules.some((r) => m.rules.find((x) => x.id === r)!.effect === 'needs_review'))).toBe(true);
  });

  it.each(TABLES[name])('$name', (c) => {
    // With the tenant allowlisting everything, only the rules decide.
    const d = run(c, allowAll(name));
    expect(packRules(d)).toEqual(c.rules);
    expect(d.decision).toBe(c.decision);
    expect(d.reviewRoute).toBe(c.route ?? null);
    const deciding = m.rules.filter((r) => c.rules.includes(r.id) && r.effect === d.decision);
    expect(d.nextStep).toBe([m.next_step[d.decision], ...new Set(deciding.map((r) => `Why: ${r.reason}`))].join(' '));
    for (const r of c.rules) expect(d.catalogRefs).toContain(`rule:${r}`);
    // A fresh tenant: the action type's default joins in, and the higher effect wins.
    const fresh = run(c, EMPTY_OVERLAY);
    const def = m.action_types.find((a) => a.id === c.action_type)!.default_decision;
    expect(fresh.decision).toBe(RANK[def] > RANK[c.decision] ? def : c.decision);
  });

  it('gives each action type its default under a quiet context, and allow once allowlisted unless a rule or a block stands', () => {
    for (const a of m.action_types) {
      const always = m.rules.filter((r) => r.when.action_types?.includes(a.id) && Object.keys(r.when.context).length === 0);
      const fresh = decide(pack, { action_type: a.id, context: QUIET_CONTEXT[name] });
      expect(fresh.decision, a.id).toBe(always.length ? 'needs_review' : a.default_decision);
      if (fresh.decision === 'needs_review') expect(fresh.reviewRoute, a.id).toBe(always.find((r) => r.review_route)?.review_route ?? a.review_route ?? m.review_route);
      const allowed = decide(pack, { action_type: a.id, context: QUIET_CONTEXT[name] }, allowAll(name));
      expect(allowed.decision, a.id).toBe(a.default_decision === 'blocked' ? 'blocked' : always.length ? 'needs_review' : 'allow');
    }
  });

  it('routes needs_review to the pack default route where neither the rule nor the action type names one', () => {
    expect(m.review_route).toMatch(/^(chat|workflow|webhook|browser):[a-z0-9-]+$/);
    const plain = m.action_types.filter((a) => a.default_decision === 'needs_review' && a.review_route === null);
    expect(plain.length).toBeGreaterThan(0);
    for (const a of plain) {
      const d = decide(pack, { action_type: a.id, context: QUIET_CONTEXT[name] });
      const always = m.rules.find((r) => r.when.action_types?.includes(a.id) && Object.keys(r.when.context).length === 0 && r.review_route);
      if (!always) expect(d.reviewRoute, a.id).toBe(m.review_route);
    }
  });

  it('lists realistic action types, the required context, cited rules and its claim boundary', () => {
    expect(m.action_types.length).toBeGreaterThanOrEqual(6);
    for (const a of m.action_types) expect(a.description.length, a.id).toBeGreaterThan(20);
    expect(m.required_fields).toEqual(expect.arrayContaining(['pack', 'proposed_action', 'action_type', 'context', 'context.tool_id']));
    expect(m.rules.some((r) => r.effect === 'blocked')).toBe(true);
    expect(m.rules.some((r) => r.effect === 'needs_review')).toBe(true);
    for (const r of m.rules) {
      expect(r.id.startsWith(`${name}.`), r.id).toBe(true);
      expect(r.citations.length, r.id).toBeGreaterThan(0);
      expect(r.reason.length, r.id).toBeGreaterThan(20);
      if (r.effect === 'blocked') expect(r.review_route, r.id).toBeUndefined();
    }
    expect(m.claim_boundary.startsWith(CLAIM_BOUNDARY)).toBe(true);
    expect(m.claim_boundary).toContain('evidence and routing, never a certification of compliance, legal approval or agency acceptance');
    expect(m.claim_boundary.length).toBeGreaterThan(CLAIM_BOUNDARY.length + 20);
  });
});

describe('manifest digests in real seals', () => {
  let ctx: TestContext;
  let key: string;
  let published: any[];
  beforeAll(async () => {
    ctx = await createTestContext();
    ({ apiKey: key } = await ctx.signup());
    published = (await ctx.request('/v1/packs')).body.packs;
  });
  afterAll(async () => {
    await ctx.close();
  });

  it.each(VERTICALS)('%s: the seal of a rule-decided gate call commits the manifest digest GET /v1/packs publishes, and the rules that fired', async (name) => {
    const c = TABLES[name].find((x) => x.rules.length > 1)!;
    const res = await ctx.request('/v1/gate', { json: gateBody(name, { action_type: c.action_type, context: { ...QUIET_CONTEXT[name], ...c.context } }), key });
    expect(res.status, res.text).toBe(201);
    const att = res.body.evidence_packet.seal.attestation;
    const { manifest_digest, ...manifest } = published.find((p) => p.name === name);
    expect(att.manifest_digest).toBe(getGatePack(name).digest);
    expect(att.manifest_digest).toBe(manifest_digest);
    expect(createHash('sha256').update(canonicalBytes(manifest)).digest('hex')).toBe(att.manifest_digest);
    expect(att.context.findings.filter((f: any) => !f.rule.includes('.default.')).map((f: any) => f.rule)).toEqual(c.rules);
    expect(att.context.pack_version).toBe(manifest.version);
    expect((await ctx.request('/v1/verify', { json: res.body.verify_request })).body.verified).toBe(true);
  });
});
