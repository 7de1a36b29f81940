/**
 * The law gate pack, backed by the core law engine (interface-spec "What the service does" 2;
 * companion/gate/law-engine/). Anchors are the ABA Model Rules of Professional Conduct and ABA
 * Formal Opinion 512 (2024) on generative AI tools.
 *
 * The law rules live in the engine's ruleset, evaluated along the five grading-mirror
 * dimensions over law_context and the classes of the proposed action. This manifest names the
 * engine's version and rules digest, so its own digest, committed in every law seal, pins the
 * rules as well; GET /v1/packs publishes the ruleset itself.
 */
import { CLASSIFICATION_BOUNDARY, LAW_ENGINE_ID, LAW_ENGINE_VERSION, LAW_RULES_DIGEST } from '../law-ruleset/ruleset.ts';
import { defineGatePack } from '../manifest.ts';
import { enumValue, idValue, key, regionValue } from '../values.ts';

export const LAW_PACK = defineGatePack({
  name: 'law',
  version: '1.1.0',
  title: 'Law: proposed actions of legal AI tools',
  summary: 'Gates filings, client communications and disclosures proposed by AI tools used in legal work.',
  engine: { id: LAW_ENGINE_ID, version: LAW_ENGINE_VERSION, rules_digest: LAW_RULES_DIGEST },
  rate: 12,
  context_field: 'law_context',
  context_keys: {
    matter_band: key(true, 'Risk band of the matter under the firm’s own banding', enumValue(['low', 'moderate', 'high', 'critical'])),
    tool_id: key(true, 'Registered id of the AI tool proposing the action', idValue()),
    doctrine_anchor: key(
      true,
      'The professional-conduct doctrine the action touches most (ABA Model Rules)',
      enumValue([
        'competence',
        'communication',
        'confidentiality',
        'privilege',
        'work-product',
        'conflicts',
        'candor-to-tribunal',
        'supervision',
        'unauthorized-practice',
        'advertising',
      ]),
    ),
    jurisdiction: key(true, 'Where the matter sits: ISO 3166 country or subdivision, e.g. US-NY', regionValue()),
    client_consent: key(
      false,
      'Whether informed client consent to this use of the AI tool is documented (ABA Formal Op. 512)',
      enumValue(['documented', 'not-documented', 'not-applicable']),
    ),
    tool_data_handling: key(
      false,
      'What the AI tool does with its inputs: kept in the firm, held by a vendor that does not train on them, used to train the vendor’s models, or not known (ABA Formal Op. 512 on self-learning tools)',
      enumValue(['firm-controlled', 'vendor-no-training', 'vendor-trains-on-inputs', 'unknown']),
    ),
  },
  action_type_required: false,
  default_action_type: 'proposed-action',
  action_types: [
    {
      id: 'proposed-action',
      title: 'Proposed action',
      description: 'Any next step an AI tool proposes in a matter when no narrower type applies.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['ABA Model Rule 5.3', 'ABA Formal Op. 512 (2024)'],
    },
    {
      id: 'court-filing',
      title: 'Court filing',
      description: 'Submitting a pleading, motion or brief drafted with AI assistance to a tribunal.',
      default_decision: 'needs_review',
      review_route: 'browser:supervising-attorney',
      citations: ['ABA Model Rule 3.3', 'Fed. R. Civ. P. 11(b)'],
    },
    {
      id: 'client-communication',
      title: 'Client communication',
      description: 'Sending advice or status to a client that an AI tool drafted.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['ABA Model Rule 1.4', 'ABA Model Rule 1.6'],
    },
    {
      id: 'legal-research-memo',
      title: 'Legal research memo',
      description: 'Relying on AI-assisted research, including its citations, in work product.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['ABA Model Rule 1.1'],
    },
    {
      id: 'contract-redline',
      title: 'Contract redline',
      description: 'Sending AI-proposed changes to a counterparty.',
      default_decision: 'needs_review',
      review_route: null,
      citations: ['ABA Model Rule 1.1', 'ABA Model Rule 5.3'],
    },
    {
      id: 'discovery-production',
      title: 'Discovery production',
      description: 'Producing documents to another party in discovery, after an AI-assisted responsiveness or privilege review.',
      default_decision: 'needs_review',
      review_route: 'browser:supervising-attorney',
      citations: ['Fed. R. Civ. P. 26(b)(5)', 'Fed. R. Civ. P. 34', 'Fed. R. Evid. 502(b)'],
    },
    {
      id: 'privileged-material-external-share',
      title: 'Share privileged material with an external tool',
      description: 'Sending privileged or confidential client material to an AI tool outside the firm’s control.',
      default_decision: 'blocked',
      review_route: null,
      citations: ['ABA Model Rule 1.6(c)', 'ABA Formal Op. 512 (2024)'],
    },
  ],
  // The law rules are the engine's ruleset (../law-ruleset/rules.ts), committed through engine.rules_digest.
  rules: [],
  review_route: 'browser:legal-review',
  next_step: {
    allow: 'You may proceed: this action is inside your firm’s approved scope for AI tools. The decision is sealed as evidence.',
    needs_review:
      'Pause here. Do not send, file or share this yet: it has been routed for attorney review. Continue only after a reviewer approves it.',
    blocked:
      'Stop. Your firm’s rules for AI tools do not permit this action. Do not retry it in another tool; ask your supervising attorney how to proceed.',
  },
  catalog_refs: ['pack:law', 'engine:law-core', 'claim-boundary:evidence-and-routing'],
  claim_boundary_note: `It is not legal advice and does not replace a supervising attorney’s judgment. ${CLASSIFICATION_BOUNDARY}`,
});
