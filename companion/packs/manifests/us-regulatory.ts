/**
 * The US regulatory gate pack: AI-drafted submissions to federal agencies (rulemaking
 * comments, filings, correspondence). A manifest-backed gate (interface-spec 2).
 *
 * Rules block submissions in the name of someone who did not authorize them and confidential
 * business information on a public docket; certified submissions, unconfirmed submitters, CBI
 * on other channels and EDGAR filings are reviewed by a person first.
 */
import { defineGatePack } from '../manifest.ts';
import { booleanValue, enumValue, idValue, key } from '../values.ts';

export const US_REGULATORY_PACK = defineGatePack({
  name: 'us-regulatory',
  version: '1.1.0',
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
    contains_cbi: key(false, 'Whether the submission contains confidential business information or trade secrets', booleanValue()),
    submitter_authorization: key(
      false,
      'Whether the named submitter authorized this submission in their name',
      enumValue(['self', 'authorized-representative', 'not-authorized', 'unknown']),
    ),
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
      citations: ['18 U.S.C. 1001', '40 CFR 122.22(d) (example certification)'],
    },
    {
      id: 'us-regulatory.identity.not-authorized',
      effect: 'blocked',
      when: { context: { submitter_authorization: ['not-authorized'] } },
      reason: 'A submission is not made in the name of someone who did not authorize it.',
      citations: ['18 U.S.C. 1001', '5 U.S.C. 553(c)'],
    },
    {
      id: 'us-regulatory.identity.unconfirmed',
      effect: 'needs_review',
      when: { context: { submitter_authorization: ['unknown'] } },
      reason: 'The named submitter’s authorization is confirmed before anything is submitted in their name.',
      citations: ['18 U.S.C. 1001'],
    },
    {
      id: 'us-regulatory.cbi.public-docket',
      effect: 'blocked',
      when: { context: { contains_cbi: [true], submission_channel: ['regulations-gov'] } },
      reason: 'Comments on regulations.gov are public; confidential business information goes through the agency’s confidential channel instead.',
      citations: ['40 CFR 2.203(b)', '5 U.S.C. 552(b)(4)'],
    },
    {
      id: 'us-regulatory.cbi.marking-check',
      effect: 'needs_review',
      when: { context: { contains_cbi: [true], submission_channel: ['agency-portal', 'email', 'paper', 'edgar'] } },
      reason: 'Confidential business information is marked and claimed as the agency requires before it is submitted.',
      citations: ['40 CFR 2.203(b)', '17 CFR 200.83 (SEC confidential treatment)', '21 CFR 20.61'],
    },
    {
      id: 'us-regulatory.edgar.authorized-filer',
      effect: 'needs_review',
      when: { action_types: ['regulatory-filing', 'compliance-report-draft'], context: { submission_channel: ['edgar'] } },
      reason: 'An EDGAR submission is released by the filer’s authorized signer, whose signature it carries.',
      citations: ['17 CFR 232.302 (Regulation S-T, signatures)'],
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
