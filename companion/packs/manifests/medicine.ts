/**
 * The medicine gate pack: protected health information (HIPAA) and clinical output of AI tools.
 * A manifest-backed gate (interface-spec "What the service does" 2).
 *
 * Rules block PHI to a tool no BAA covers and psychotherapy notes leaving without the patient's
 * specific authorization; Part 2, behavioral health, HIV or genetic, and research exports go to
 * the privacy office or IRB; order suggestions and messages about children always reach a
 * clinician first.
 */
import { defineGatePack } from '../manifest.ts';
import { booleanValue, enumValue, idValue, key } from '../values.ts';

/** Action types that send records out of the covered entity: to a payer, or as an export. */
const DISCLOSURES = ['phi-export', 'prior-authorization-draft'];
const PRIVACY_OFFICE = 'workflow:privacy-office';

export const MEDICINE_PACK = defineGatePack({
  name: 'medicine',
  version: '1.1.0',
  title: 'Medicine: clinical AI output and protected health information',
  summary: 'Gates AI-drafted clinical content, patient messages, order suggestions and PHI movement.',
  engine: { id: 'manifest-rules', version: '1.0.0' },
  rate: 12,
  context_field: 'context',
  context_keys: {
    care_setting: key(
      true,
      'Where care happens',
      enumValue(['inpatient', 'outpatient', 'emergency', 'telehealth', 'behavioral-health', 'research']),
    ),
    tool_id: key(true, 'Registered id of the AI tool involved', idValue()),
    phi_involved: key(true, 'Whether protected health information is part of the action', booleanValue()),
    tool_baa_status: key(
      true,
      'Whether a HIPAA business associate agreement covers the tool',
      enumValue(['baa-signed', 'no-baa', 'unknown']),
    ),
    patient_age_band: key(false, 'Age band of the patient', enumValue(['pediatric', 'adult', 'geriatric'])),
    record_sensitivity: key(
      false,
      'The most sensitive kind of record involved, beyond ordinary PHI',
      enumValue(['standard', 'sud-part2', 'psychotherapy-notes', 'hiv-status', 'genetic']),
    ),
  },
  action_type_required: true,
  default_action_type: null,
  action_types: [
    {
      id: 'clinical-note-draft',
      title: 'Clinical note draft',
      description: 'An AI-drafted or ambient-scribe note before it enters the record.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['45 CFR 164.526 (amendment)', 'CMS documentation guidelines'],
    },
    {
      id: 'patient-message',
      title: 'Patient message',
      description: 'An AI-drafted reply sent to a patient.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['45 CFR 164.530(c)'],
    },
    {
      id: 'order-suggestion',
      title: 'Order suggestion',
      description: 'An AI suggestion of a medication, lab or imaging order.',
      default_decision: 'needs_review',
      review_route: 'browser:ordering-clinician',
      citations: ['21 U.S.C. 360j(o)(1)(E) (clinical decision support)', 'FDA CDS guidance (2022)'],
    },
    {
      id: 'discharge-summary-draft',
      title: 'Discharge summary draft',
      description: 'An AI-drafted discharge summary or patient instructions.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['42 CFR 482.43'],
    },
    {
      id: 'prior-authorization-draft',
      title: 'Prior authorization draft',
      description: 'An AI-drafted prior authorization request to a payer.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['45 CFR 164.506 (payment)'],
    },
    {
      id: 'phi-export',
      title: 'PHI export',
      description: 'Moving protected health information out of the covered entity’s systems to a tool or party.',
      default_decision: 'needs_review',
      review_route: 'workflow:privacy-office',
      citations: ['45 CFR 164.502(b) (minimum necessary)', '45 CFR 164.502(e)'],
    },
  ],
  rules: [
    {
      id: 'medicine.hipaa.phi-to-tool-without-baa',
      effect: 'blocked',
      when: { context: { phi_involved: [true], tool_baa_status: ['no-baa', 'unknown'] } },
      reason: 'PHI does not go to an AI tool that no business associate agreement covers.',
      citations: ['45 CFR 164.502(e)', '45 CFR 164.504(e)'],
    },
    {
      id: 'medicine.hipaa.psychotherapy-notes-disclosure',
      effect: 'blocked',
      when: { action_types: DISCLOSURES, context: { record_sensitivity: ['psychotherapy-notes'] } },
      reason: 'Psychotherapy notes leave only with the patient’s specific authorization, which an AI workflow does not hold.',
      citations: ['45 CFR 164.508(a)(2)', '45 CFR 164.508(b)(4)'],
    },
    {
      id: 'medicine.part2.sud-record-disclosure',
      effect: 'needs_review',
      when: { action_types: DISCLOSURES, context: { record_sensitivity: ['sud-part2'] } },
      review_route: PRIVACY_OFFICE,
      reason: 'Substance use disorder treatment records need the patient’s Part 2 consent on file before they leave.',
      citations: ['42 CFR 2.31', '42 CFR 2.33'],
    },
    {
      id: 'medicine.part2.behavioral-health-export',
      effect: 'needs_review',
      when: { action_types: ['phi-export'], context: { care_setting: ['behavioral-health'] } },
      review_route: PRIVACY_OFFICE,
      reason: 'Behavioral health records may carry consent rules stricter than HIPAA; the privacy office checks before export.',
      citations: ['42 CFR Part 2', '45 CFR 164.508(a)(2)'],
    },
    {
      id: 'medicine.state-law.special-category-export',
      effect: 'needs_review',
      when: { action_types: ['phi-export'], context: { record_sensitivity: ['hiv-status', 'genetic'] } },
      review_route: PRIVACY_OFFICE,
      reason: 'HIV and genetic information often need specific written consent under state law before export.',
      citations: ['45 CFR 160.203(b) (more stringent state law)', 'N.Y. Pub. Health Law § 2782', '410 ILCS 513 (Illinois Genetic Information Privacy Act)'],
    },
    {
      id: 'medicine.research.phi-export',
      effect: 'needs_review',
      when: { action_types: ['phi-export'], context: { care_setting: ['research'], phi_involved: [true] } },
      review_route: 'workflow:irb-privacy-board',
      reason: 'PHI used for research leaves only with an authorization or an IRB or privacy board waiver on file.',
      citations: ['45 CFR 164.508', '45 CFR 164.512(i)'],
    },
    {
      id: 'medicine.cds.clinician-places-order',
      effect: 'needs_review',
      when: { action_types: ['order-suggestion'], context: {} },
      reason: 'An AI order suggestion is placed only by a clinician who reviewed its basis, whatever the tenant allows.',
      citations: ['21 U.S.C. 360j(o)(1)(E)', 'FDA Clinical Decision Support Software guidance (2022)'],
    },
    {
      id: 'medicine.minor.patient-message',
      effect: 'needs_review',
      when: { action_types: ['patient-message'], context: { patient_age_band: ['pediatric'] } },
      reason: 'A message about a minor goes to the right person under state minor-consent and proxy-access rules; a clinician checks first.',
      citations: ['45 CFR 164.502(g)(3)'],
    },
  ],
  review_route: 'browser:clinical-review',
  next_step: {
    allow: 'You may proceed: this action is inside your organisation’s approved use of AI tools. The decision is sealed as evidence.',
    needs_review:
      'Pause here. Do not send, sign or place this yet: it has been routed for clinical review. Continue only after a reviewer approves it.',
    blocked:
      'Stop. This would expose patient information in a way your organisation does not permit. Do not retry it in another tool; contact your privacy officer.',
  },
  catalog_refs: ['pack:medicine', 'engine:manifest-rules', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note: 'It is not medical advice, not a clinical decision and not a HIPAA compliance determination.',
});
