/**
 * The defense gate pack: controlled information (CUI, FCI) and export-controlled technical data
 * (ITAR, EAR) near AI tools. A manifest-backed gate (interface-spec "What the service does" 2).
 *
 * Rules block controlled information leaving an authorized boundary, unlicensed deemed exports
 * and procurement-integrity information; licensed foreign releases and export-controlled data
 * in a commercial Moderate cloud go to export control; an incident report always goes to the
 * company's authorized official.
 */
import { defineGatePack } from '../manifest.ts';
import { booleanValue, enumValue, idValue, key } from '../values.ts';

const CONTROLLED = ['cui', 'cui-specified', 'itar', 'ear'];
const EXPORT_CONTROLLED = ['itar', 'ear'];
const EXPORT_CONTROL = 'workflow:export-control';

export const DEFENSE_PACK = defineGatePack({
  name: 'defense',
  version: '1.1.0',
  title: 'Defense: controlled and export-controlled information',
  summary: 'Gates AI-tool actions that touch CUI, FCI or ITAR/EAR technical data before anything leaves its boundary.',
  engine: { id: 'manifest-rules', version: '1.0.0' },
  rate: 15,
  context_field: 'context',
  context_keys: {
    data_marking: key(
      true,
      'Highest marking of the information involved',
      enumValue(['public', 'fci', 'cui', 'cui-specified', 'itar', 'ear']),
    ),
    tool_id: key(true, 'Registered id of the AI tool involved', idValue()),
    tool_boundary: key(
      true,
      'Where the AI tool processes data',
      enumValue(['on-premises', 'govcloud-fedramp-high', 'fedramp-moderate-cloud', 'commercial-cloud', 'external-ai-service']),
    ),
    recipient_foreign_person: key(false, 'Whether a foreign person receives the output (deemed export)', booleanValue()),
    export_authorization: key(
      false,
      'What authorizes a release of export-controlled data: a license or agreement (DSP-5, TAA, BIS license), an exemption or exception, none, or not known',
      enumValue(['license-or-agreement', 'exemption', 'none', 'unknown']),
    ),
    procurement_information: key(
      false,
      'Most sensitive procurement information involved (FAR 3.104; 41 U.S.C. 2102)',
      enumValue(['none', 'own-proprietary', 'competitor-proprietary', 'source-selection']),
    ),
    contract_id: key(false, 'Contract or program identifier', idValue(64)),
  },
  action_type_required: true,
  default_action_type: null,
  action_types: [
    {
      id: 'export-controlled-summary',
      title: 'Summary of export-controlled technical data',
      description: 'An AI-drafted summary or derivative of ITAR or EAR controlled technical data.',
      default_decision: 'needs_review',
      review_route: 'workflow:export-control',
      citations: ['22 CFR 120.33 (technical data)', '15 CFR 734.7'],
    },
    {
      id: 'cui-handling',
      title: 'CUI handling',
      description: 'Processing, drafting from or storing Controlled Unclassified Information with an AI tool.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['32 CFR Part 2002', 'DFARS 252.204-7012', 'NIST SP 800-171 Rev. 2'],
    },
    {
      id: 'cui-external-ai-transfer',
      title: 'Send CUI to an external AI tool',
      description: 'Transmitting CUI to an AI service outside the authorized system boundary.',
      default_decision: 'blocked',
      review_route: null,
      citations: ['DFARS 252.204-7012(b)(2)(ii)(D)', '32 CFR 2002.14'],
    },
    {
      id: 'technical-data-transfer',
      title: 'Technical data transfer',
      description: 'Releasing drawings, specifications or source code to another party.',
      default_decision: 'needs_review',
      review_route: 'workflow:export-control',
      citations: ['22 CFR 120.50 (release)', '15 CFR 734.15'],
    },
    {
      id: 'proposal-draft',
      title: 'Proposal draft',
      description: 'An AI-drafted section of a bid or proposal for a defense contract.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['FAR 3.104 (procurement integrity)'],
    },
    {
      id: 'incident-report-draft',
      title: 'Cyber incident report draft',
      description: 'An AI-drafted report of a cyber incident affecting covered defense information.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['DFARS 252.204-7012(c) (72-hour report)'],
    },
  ],
  rules: [
    {
      id: 'defense.cui.external-boundary',
      effect: 'blocked',
      when: { context: { data_marking: CONTROLLED, tool_boundary: ['commercial-cloud', 'external-ai-service'] } },
      reason: 'Controlled information does not go to an AI tool outside an authorized boundary.',
      citations: ['DFARS 252.204-7012(b)(2)(ii)(D)', '32 CFR 2002.14(h)'],
    },
    {
      id: 'defense.export.foreign-person-unlicensed',
      effect: 'blocked',
      when: { context: { data_marking: EXPORT_CONTROLLED, recipient_foreign_person: [true] } },
      unless: { context: { export_authorization: ['license-or-agreement', 'exemption'] } },
      reason: 'Releasing export-controlled data to a foreign person is a deemed export that needs a license first.',
      citations: ['22 CFR 120.56', '15 CFR 734.13(b)'],
    },
    {
      id: 'defense.export.foreign-person-licensed',
      effect: 'needs_review',
      when: { context: { data_marking: EXPORT_CONTROLLED, recipient_foreign_person: [true], export_authorization: ['license-or-agreement', 'exemption'] } },
      review_route: EXPORT_CONTROL,
      reason: 'A licensed release to a foreign person is checked against the license’s scope and provisos first.',
      citations: ['22 CFR 123.22', '22 CFR 124.1', '15 CFR 750.7'],
    },
    {
      id: 'defense.export.us-persons-only-boundary',
      effect: 'needs_review',
      when: { context: { data_marking: EXPORT_CONTROLLED, tool_boundary: ['fedramp-moderate-cloud'] } },
      review_route: EXPORT_CONTROL,
      reason: 'Export-controlled data in a commercial FedRAMP Moderate cloud is checked for U.S.-person-only access or end-to-end encryption first.',
      citations: ['22 CFR 120.54(a)(5)', '15 CFR 734.18(a)(5)'],
    },
    {
      id: 'defense.fci.external-service-review',
      effect: 'needs_review',
      when: { context: { data_marking: ['fci'], tool_boundary: ['external-ai-service'] } },
      reason: 'Federal contract information in an external AI service is reviewed against basic safeguarding.',
      citations: ['FAR 52.204-21'],
    },
    {
      id: 'defense.procurement.integrity-information',
      effect: 'blocked',
      when: { context: { procurement_information: ['competitor-proprietary', 'source-selection'] } },
      reason: 'A competitor’s bid or proposal information and source selection information are not used in an AI workflow.',
      citations: ['41 U.S.C. 2102', 'FAR 3.104-3'],
    },
    {
      id: 'defense.incident.authorized-submitter',
      effect: 'needs_review',
      when: { action_types: ['incident-report-draft'], context: {} },
      reason: 'A cyber incident report to DoD is submitted by the company’s authorized official, whatever the tenant allows.',
      citations: ['DFARS 252.204-7012(c)(1)', 'DFARS 252.204-7012(c)(3) (medium assurance certificate)'],
    },
  ],
  review_route: 'workflow:security-office',
  next_step: {
    allow: 'You may proceed within the approved system boundary. The decision is sealed as evidence.',
    needs_review:
      'Pause here. Do not release, send or upload this yet: it has been routed to your security office. Continue only after they approve it.',
    blocked:
      'Stop. This would move controlled information somewhere it is not allowed to go. Do not retry it in another tool; contact your security officer.',
  },
  catalog_refs: ['pack:defense', 'engine:manifest-rules', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note:
    'It is not an export-control jurisdiction or classification determination and does not authorize any release of controlled information.',
});
