/**
 * The US regulatory gate pack: AI-drafted submissions to federal agencies (rulemaking
 * comments, filings, correspondence). A manifest-backed gate (interface-spec 2).
 */
import { defineGatePack } from '../manifest.ts';
import { booleanValue, enumValue, idValue, key } from '../values.ts';

export const US_REGULATORY_PACK = defineGatePack({
  name: 'us-regulatory',
  version: '1.0.0',
  title: 'US regulatory: submissions to federal agencies',
  summary: 'Gates AI-drafted comments, filings and correspondence before they reach an agency.',
  engine: { id: 'manifest-rules', version: '1.0.0' },
  rate: 8,
  context_field: 'context',
  context_keys: {
    agency: key(true, 'Agency acronym or id, e.g. EPA, FDA, SEC', idValue(32)),
    submission_channel: key(
      true,
      'How the submission reaches the agency',
      enumValue(['regulations-gov', 'agency-portal', 'edgar', 'email', 'paper']),
    ),
    tool_id: key(true, 'Registered id of the AI tool involved', idValue()),
    docket_id: key(false, 'Docket or file number, e.g. EPA-HQ-OAR-2021-0317', idValue(64)),
    signatory_certification: key(false, 'Whether the submission is certified by a signatory under penalty of law', booleanValue()),
  },
  action_type_required: true,
  default_action_type: null,
  action_types: [
    {
      id: 'public-comment-draft',
      title: 'Public comment draft',
      description: 'An AI-drafted comment on a proposed rule.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['5 U.S.C. 553(c)'],
    },
    {
      id: 'regulatory-filing',
      title: 'Regulatory filing',
      description: 'A report, application or disclosure filed with an agency.',
      default_decision: 'needs_review',
      review_route: 'workflow:regulatory-affairs',
      citations: ['18 U.S.C. 1001'],
    },
    {
      id: 'agency-correspondence',
      title: 'Agency correspondence',
      description: 'A letter or response to agency staff.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['18 U.S.C. 1001'],
    },
    {
      id: 'foia-request-draft',
      title: 'FOIA request draft',
      description: 'An AI-drafted Freedom of Information Act request.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['5 U.S.C. 552(a)(3)'],
    },
    {
      id: 'compliance-report-draft',
      title: 'Compliance report draft',
      description: 'An AI-drafted periodic compliance or monitoring report.',
      default_decision: 'needs_review',
      review_route: 'workflow:regulatory-affairs',
      citations: ['18 U.S.C. 1001'],
    },
    {
      id: 'bulk-comment-generation',
      title: 'Bulk comment generation',
      description: 'Generating many comments for submission under different submitter identities.',
      default_decision: 'blocked',
      review_route: null,
      citations: ['18 U.S.C. 1001', '5 U.S.C. 553(c)'],
    },
  ],
  rules: [
    {
      id: 'us-regulatory.certification.human-signatory',
      effect: 'needs_review',
      when: { context: { signatory_certification: [true] } },
      reason: 'A certified submission is reviewed by its signatory, whatever the tenant allows.',
      citations: ['18 U.S.C. 1001'],
    },
  ],
  review_route: 'browser:regulatory-review',
  next_step: {
    allow: 'You may proceed: this submission is inside your organisation’s approved use of AI tools. The decision is sealed as evidence.',
    needs_review:
      'Pause here. Do not submit this yet: it has been routed for regulatory review. Continue only after a reviewer approves it.',
    blocked:
      'Stop. Your organisation does not permit this kind of submission from an AI tool. Do not retry it in another tool; contact your regulatory affairs lead.',
  },
  catalog_refs: ['pack:us-regulatory', 'engine:manifest-rules', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note: 'It is not agency acceptance, not a filing receipt and not legal advice.',
});
