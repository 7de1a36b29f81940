/**
 * The law engine's rules, as data (interface-spec "What the service does" 2). Each rule names
 * one of the five grading-mirror dimensions (interface-spec "Review request": mirror_grades),
 * the action classes and law_context values it fires on, its effect, and a short employee-safe
 * reason that the gate appends to next_step. Rules only ever raise a decision
 * (blocked > needs_review > allow), and a tenant's allow list cannot waive them.
 *
 * Inputs a rule may read:
 * - action classes: classify.ts over the text, plus the classes the action type implies
 *   (ACTION_TYPE_CLASSES), so a typed request and a typed-out sentence meet the same rules;
 * - law_context values: matter_band, doctrine_anchor, jurisdiction, client_consent,
 *   tool_data_handling; and jurisdiction_group, derived from jurisdiction's country.
 * tool_id is identity, not a condition: core rules stay tenant-neutral, and a tenant keys
 * tool-specific choices in its own policy. A condition on an absent optional key never holds.
 */
import type { ActionClassId } from './classes.ts';

export const LAW_DIMENSIONS = ['citation_support', 'privilege_boundary', 'supervision_route', 'client_confidentiality', 'filing_readiness'] as const;
export type LawDimension = (typeof LAW_DIMENSIONS)[number];

/** law_context keys rules may name, plus the derived jurisdiction_group. */
export const LAW_CONDITION_KEYS = ['matter_band', 'doctrine_anchor', 'jurisdiction', 'client_consent', 'tool_data_handling', 'jurisdiction_group'] as const;
export type LawConditionKey = (typeof LAW_CONDITION_KEYS)[number];
type Conditions = Partial<Record<LawConditionKey, string[]>>;

export interface LawRule {
  id: string;
  dimension: LawDimension;
  effect: 'needs_review' | 'blocked';
  /** Every listed condition must hold; a rule names at least one. */
  when: { all_classes?: ActionClassId[]; any_classes?: ActionClassId[]; context?: Conditions };
  /** The rule does not fire when every one of these holds. */
  unless?: { context: Conditions };
  /** Overrides the action type's review route when this rule decides a needs_review. */
  review_route?: string;
  reason: string;
  citations: string[];
}

/** What each law action type says about the action, whatever its text says. */
export const ACTION_TYPE_CLASSES: Record<string, ActionClassId[]> = {
  'proposed-action': [],
  'court-filing': ['filing'],
  'client-communication': ['client-communication'],
  'legal-research-memo': ['research'],
  'contract-redline': ['drafting', 'external-send'],
  'discovery-production': ['external-send'],
  'privileged-material-external-share': ['privileged-material', 'external-send'],
};

/** Countries grouped by the data-transfer regime a matter sits under; any other country is "other". */
export const JURISDICTION_GROUPS: Record<'us' | 'eea' | 'uk', string[]> = {
  us: ['US'],
  // EU 27 plus Iceland, Liechtenstein and Norway (EEA Agreement; GDPR applies EEA-wide).
  eea: ['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IS', 'IT', 'LI', 'LT', 'LU', 'LV', 'MT', 'NL', 'NO', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK'],
  uk: ['GB'],
};

const SUPERVISING_ATTORNEY = 'browser:supervising-attorney';
const ABA_512 = 'ABA Formal Op. 512 (2024)';

export const LAW_RULES: LawRule[] = [
  // citation_support: authority an AI tool supplies is checked before anyone outside relies on it.
  {
    id: 'law.citation.filing-authority-check',
    dimension: 'citation_support',
    effect: 'needs_review',
    when: { all_classes: ['filing', 'citing-authority'] },
    review_route: SUPERVISING_ATTORNEY,
    reason: 'Every authority cited in a filing is checked against its source before filing.',
    citations: ['ABA Model Rule 3.3(a)(1)', 'Fed. R. Civ. P. 11(b)(2)', 'Mata v. Avianca, Inc., 678 F. Supp. 3d 443 (S.D.N.Y. 2023)'],
  },
  {
    id: 'law.citation.outside-authority-check',
    dimension: 'citation_support',
    effect: 'needs_review',
    when: { all_classes: ['citing-authority'], any_classes: ['external-send', 'client-communication'] },
    reason: 'Authority cited to a client or an outside party is checked against its source first.',
    citations: ['ABA Model Rule 1.1', 'ABA Model Rule 4.1', ABA_512],
  },
  {
    id: 'law.citation.high-stakes-research',
    dimension: 'citation_support',
    effect: 'needs_review',
    when: { all_classes: ['research'], context: { matter_band: ['high', 'critical'] } },
    reason: 'AI-assisted research in a high-stakes matter is verified before anyone relies on it.',
    citations: ['ABA Model Rule 1.1, cmt. 8', ABA_512],
  },
  // privilege_boundary: privileged material stays where privilege survives.
  {
    id: 'law.privilege.self-learning-tool',
    dimension: 'privilege_boundary',
    effect: 'blocked',
    when: { any_classes: ['privileged-material'], context: { tool_data_handling: ['vendor-trains-on-inputs'] } },
    reason: 'Privileged material does not go to a tool that learns from its inputs.',
    citations: ['Fed. R. Evid. 502', 'ABA Model Rule 1.6(c)', ABA_512],
  },
  {
    id: 'law.privilege.anchor-self-learning-tool',
    dimension: 'privilege_boundary',
    effect: 'blocked',
    when: { context: { doctrine_anchor: ['privilege', 'work-product'], tool_data_handling: ['vendor-trains-on-inputs'] } },
    reason: 'A privilege or work-product matter is not worked in a tool that learns from its inputs.',
    citations: ['Fed. R. Evid. 502', 'Fed. R. Civ. P. 26(b)(3)', ABA_512],
  },
  {
    id: 'law.privilege.unknown-tool-handling',
    dimension: 'privilege_boundary',
    effect: 'needs_review',
    when: { any_classes: ['privileged-material'], context: { tool_data_handling: ['unknown'] } },
    reason: 'Privileged material goes to a tool only once its data handling is known.',
    citations: ['ABA Model Rule 1.6(c)', ABA_512],
  },
  {
    id: 'law.privilege.outside-waiver-check',
    dimension: 'privilege_boundary',
    effect: 'needs_review',
    when: { all_classes: ['privileged-material', 'external-send'] },
    reason: 'Privileged material leaving the firm is checked for waiver first.',
    citations: ['Fed. R. Evid. 502(b)', 'ABA Model Rule 1.6(c)'],
  },
  // client_confidentiality: client information goes only where the client agreed it may.
  {
    id: 'law.confidentiality.consent-not-documented',
    dimension: 'client_confidentiality',
    effect: 'needs_review',
    when: { context: { doctrine_anchor: ['confidentiality', 'privilege'], client_consent: ['not-documented'] } },
    reason: 'Client information goes to an AI tool only with documented informed consent.',
    citations: ['ABA Model Rule 1.6(a)', ABA_512],
  },
  {
    id: 'law.confidentiality.self-learning-tool-without-consent',
    dimension: 'client_confidentiality',
    effect: 'blocked',
    when: { any_classes: ['confidential-information'], context: { tool_data_handling: ['vendor-trains-on-inputs'] } },
    unless: { context: { client_consent: ['documented'] } },
    reason: 'Confidential client information does not go to a tool that learns from its inputs without the client’s informed consent.',
    citations: ['ABA Model Rule 1.6(a)', 'ABA Model Rule 1.6(c)', ABA_512],
  },
  {
    id: 'law.confidentiality.cross-border-transfer',
    dimension: 'client_confidentiality',
    effect: 'needs_review',
    when: { all_classes: ['confidential-information', 'external-send'], context: { jurisdiction_group: ['eea', 'uk'] } },
    reason: 'Personal data leaving a European matter is checked against cross-border transfer rules first.',
    citations: ['Regulation (EU) 2016/679, Art. 44', 'UK GDPR, Art. 44'],
  },
  {
    id: 'law.confidentiality.high-stakes-outside-send',
    dimension: 'client_confidentiality',
    effect: 'needs_review',
    when: { all_classes: ['confidential-information', 'external-send'], context: { matter_band: ['high', 'critical'] } },
    reason: 'Confidential information leaving a high-stakes matter is reviewed before it is sent.',
    citations: ['ABA Model Rule 1.6(c)'],
  },
  // supervision_route: a lawyer stays responsible for what the tool does.
  {
    id: 'law.supervision.critical-matter',
    dimension: 'supervision_route',
    effect: 'needs_review',
    when: { context: { matter_band: ['critical'] } },
    reason: 'Every AI-proposed action in a critical matter is reviewed.',
    citations: ['ABA Model Rule 5.1', 'ABA Model Rule 5.3'],
  },
  {
    id: 'law.supervision.advice-to-client',
    dimension: 'supervision_route',
    effect: 'needs_review',
    when: { all_classes: ['legal-advice', 'client-communication'] },
    reason: 'Advice to a client is reviewed by the responsible lawyer before it is sent.',
    citations: ['ABA Model Rule 5.3', 'ABA Model Rule 1.4(b)'],
  },
  {
    id: 'law.supervision.nonlawyer-client-advice',
    dimension: 'supervision_route',
    effect: 'blocked',
    when: { any_classes: ['client-communication', 'legal-advice'], context: { doctrine_anchor: ['unauthorized-practice'] } },
    reason: 'An AI tool does not give legal advice to a client without a lawyer.',
    citations: ['ABA Model Rule 5.5', 'ABA Model Rule 5.3'],
  },
  {
    id: 'law.supervision.client-decision',
    dimension: 'supervision_route',
    effect: 'needs_review',
    when: { any_classes: ['client-decision'] },
    reason: 'Settlement, plea, jury and appeal decisions belong to the client; a lawyer confirms the client’s instruction first.',
    citations: ['ABA Model Rule 1.2(a)', 'ABA Model Rule 1.4(a)(1)'],
  },
  // filing_readiness: nothing reaches a tribunal without the attorney of record.
  {
    id: 'law.filing.attorney-signoff',
    dimension: 'filing_readiness',
    effect: 'needs_review',
    when: { any_classes: ['filing'] },
    review_route: SUPERVISING_ATTORNEY,
    reason: 'A filing is signed off by the attorney of record before it reaches the tribunal.',
    citations: ['Fed. R. Civ. P. 11(a)', 'ABA Model Rule 3.3'],
  },
  {
    id: 'law.filing.redaction-check',
    dimension: 'filing_readiness',
    effect: 'needs_review',
    when: { all_classes: ['filing', 'confidential-information'] },
    review_route: SUPERVISING_ATTORNEY,
    reason: 'Personal identifiers in a filing are redacted, or the filing sealed, before it is filed.',
    citations: ['Fed. R. Civ. P. 5.2', 'Fed. R. Bankr. P. 9037'],
  },
  {
    id: 'law.filing.privileged-content',
    dimension: 'filing_readiness',
    effect: 'needs_review',
    when: { all_classes: ['filing', 'privileged-material'] },
    review_route: SUPERVISING_ATTORNEY,
    reason: 'Privileged material in a filing is withheld or filed under seal; an attorney decides which first.',
    citations: ['Fed. R. Evid. 502', 'Fed. R. Civ. P. 5.2(d)'],
  },
  {
    id: 'law.filing.unauthorized-practice',
    dimension: 'filing_readiness',
    effect: 'blocked',
    when: { any_classes: ['filing'], context: { doctrine_anchor: ['unauthorized-practice'] } },
    reason: 'A filing in a matter flagged for unauthorized practice is not made from an AI workflow.',
    citations: ['ABA Model Rule 5.5', 'Fed. R. Civ. P. 11(a)'],
  },
];
