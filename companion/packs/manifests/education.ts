/**
 * The education gate pack: student records (FERPA), children's data (COPPA) and special
 * education documents (IDEA) near AI tools. A manifest-backed gate (interface-spec 2).
 *
 * Rules block education records in tools outside the institution's direct control, public
 * disclosure and disclosure of opted-out directory information; third-party disclosures and
 * records for parents of college students go to the records office; IEP sections and final
 * grades are always decided by people.
 */
import { defineGatePack } from '../manifest.ts';
import { booleanValue, enumValue, idValue, key } from '../values.ts';

export const EDUCATION_PACK = defineGatePack({
  name: 'education',
  version: '1.1.0',
  title: 'Education: student records and AI tools',
  summary: 'Gates AI-tool actions on student records, grades, family communication and IEP documents.',
  engine: { id: 'manifest-rules', version: '1.0.0' },
  rate: 4,
  context_field: 'context',
  context_keys: {
    institution_level: key(true, 'The kind of institution', enumValue(['k12', 'higher-ed'])),
    tool_id: key(true, 'Registered id of the AI tool involved', idValue()),
    student_data_class: key(
      true,
      'The most sensitive student data involved (FERPA categories)',
      enumValue(['none', 'de-identified', 'directory', 'education-record']),
    ),
    tool_data_agreement: key(
      true,
      'Whether a data agreement puts the tool under the institution’s direct control (FERPA school-official exception)',
      enumValue(['signed', 'none', 'unknown']),
    ),
    student_age_band: key(false, 'Age band of the students affected', enumValue(['under-13', '13-17', '18-plus'])),
    recipient: key(
      false,
      'Who receives a disclosure or message',
      enumValue(['school-official', 'parent-or-guardian', 'eligible-student', 'third-party', 'public']),
    ),
    directory_opt_out: key(false, 'Whether the student opted out of directory information disclosure (34 CFR 99.37(a))', booleanValue()),
    grade_stakes: key(false, 'What the grade counts for', enumValue(['formative', 'summative', 'final'])),
  },
  action_type_required: true,
  default_action_type: null,
  action_types: [
    {
      id: 'student-record-access',
      title: 'Student record access',
      description: 'An AI tool reading education records.',
      default_decision: 'needs_review',
      review_route: 'workflow:records-office',
      citations: ['20 U.S.C. 1232g (FERPA)', '34 CFR 99.31'],
    },
    {
      id: 'student-record-disclosure',
      title: 'Student record disclosure',
      description: 'Disclosing personally identifiable information from education records to a third party.',
      default_decision: 'needs_review',
      review_route: 'workflow:records-office',
      citations: ['34 CFR 99.30', '34 CFR 99.32 (record of disclosures)'],
    },
    {
      id: 'grade-feedback-draft',
      title: 'Grade or feedback draft',
      description: 'An AI-drafted grade, rubric score or feedback on student work.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['34 CFR 99.3 (education records)'],
    },
    {
      id: 'parent-communication',
      title: 'Parent or guardian communication',
      description: 'An AI-drafted message to a parent or guardian.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['34 CFR 99.4'],
    },
    {
      id: 'iep-document-draft',
      title: 'IEP document draft',
      description: 'An AI-drafted section of an individualized education program.',
      default_decision: 'needs_review',
      review_route: 'browser:special-education',
      citations: ['34 CFR 300.320', '34 CFR 300.622'],
    },
    {
      id: 'lesson-material-draft',
      title: 'Lesson material draft',
      description: 'AI-drafted instructional material for students.',
      default_decision: 'needs_review',
      review_route: null,
      citations: [],
    },
  ],
  rules: [
    {
      id: 'education.ferpa.records-to-tool-without-agreement',
      effect: 'blocked',
      when: { context: { student_data_class: ['education-record'], tool_data_agreement: ['none', 'unknown'] } },
      reason: 'Education records go only to tools under the institution’s direct control.',
      citations: ['34 CFR 99.31(a)(1)(i)(B)'],
    },
    {
      id: 'education.ferpa.directory-opt-out',
      effect: 'blocked',
      when: { action_types: ['student-record-disclosure'], context: { student_data_class: ['directory'], directory_opt_out: [true] } },
      reason: 'Directory information of a student who opted out is not disclosed.',
      citations: ['34 CFR 99.37(a)(2)'],
    },
    {
      id: 'education.ferpa.public-disclosure',
      effect: 'blocked',
      when: { context: { student_data_class: ['education-record'], recipient: ['public'] } },
      reason: 'Personally identifiable information from education records is not made public.',
      citations: ['34 CFR 99.30', '34 CFR 99.33'],
    },
    {
      id: 'education.ferpa.third-party-disclosure',
      effect: 'needs_review',
      when: { action_types: ['student-record-disclosure'], context: { student_data_class: ['education-record'], recipient: ['third-party'] } },
      review_route: 'workflow:records-office',
      reason: 'A disclosure to a third party needs written consent or a named FERPA exception, and is recorded.',
      citations: ['34 CFR 99.30', '34 CFR 99.31', '34 CFR 99.32'],
    },
    {
      id: 'education.ferpa.eligible-student-parent',
      effect: 'needs_review',
      when: { context: { student_data_class: ['education-record'], recipient: ['parent-or-guardian'], institution_level: ['higher-ed'] } },
      review_route: 'workflow:records-office',
      reason: 'At a postsecondary institution FERPA rights belong to the student; a parent receives records only under an exception.',
      citations: ['34 CFR 99.5(a)', '34 CFR 99.31(a)(8)', '34 CFR 99.36'],
    },
    {
      id: 'education.coppa.under-13-without-agreement',
      effect: 'needs_review',
      when: { context: { student_age_band: ['under-13'], tool_data_agreement: ['none', 'unknown'] } },
      reason: 'A tool collecting data from children under 13 needs school authorization on record.',
      citations: ['16 CFR 312.5'],
    },
    {
      id: 'education.idea.iep-team-decides',
      effect: 'needs_review',
      when: { action_types: ['iep-document-draft'], context: {} },
      reason: 'An IEP’s content is decided by the IEP team, so every AI-drafted section is reviewed, whatever the tenant allows.',
      citations: ['34 CFR 300.321', '34 CFR 300.324'],
    },
    {
      id: 'education.grading.final-grade',
      effect: 'needs_review',
      when: { action_types: ['grade-feedback-draft'], context: { grade_stakes: ['final'] } },
      reason: 'A final grade is assigned by the instructor of record, not by an AI tool.',
      citations: ['34 CFR 99.3 (education records)'],
    },
  ],
  review_route: 'browser:education-review',
  next_step: {
    allow: 'You may proceed: this action is inside your institution’s approved use of AI tools. The decision is sealed as evidence.',
    needs_review:
      'Pause here. Do not share, post or send this yet: it has been routed for review. Continue only after a reviewer approves it.',
    blocked:
      'Stop. This would share student records in a way your institution does not permit. Do not retry it in another tool; contact your records office.',
  },
  catalog_refs: ['pack:education', 'engine:manifest-rules', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note: 'It is not a FERPA, COPPA or IDEA compliance determination.',
});
