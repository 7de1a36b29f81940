/**
 * The medicine gate pack: protected health information (HIPAA) and clinical output of AI tools.
 * A manifest-backed gate (interface-spec "What the service does" 2).
 */
import { defineGatePack } from '../manifest.ts';
import { booleanValue, enumValue, idValue, key } from '../values.ts';

export const MEDICINE_PACK = defineGatePack({
  name: 'medicine',
  version: '1.0.0',
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
      id: 'medicine.part2.behavioral-health-export',
      effect: 'needs_review',
      when: { action_types: ['phi-export'], context: { care_setting: ['behavioral-health'] } },
      reason: 'Substance use disorder records carry consent rules stricter than HIPAA.',
      citations: ['42 CFR Part 2'],
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
