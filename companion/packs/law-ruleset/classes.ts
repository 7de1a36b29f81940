/**
 * The action classes of the law engine (interface-spec "What the service does" 2) and the
 * documented phrase patterns that recognise them in the proposed action's text.
 *
 * This is data: the patterns are published by GET /v1/packs and committed by the rules digest,
 * so anyone holding a seal can see exactly which phrases could have put an action in a class.
 * Each pattern is an ECMAScript regular expression matched with the flag "i" (case-insensitive)
 * and anchored on word boundaries; no pattern can run away, every repetition is bounded.
 *
 * Two kinds of class, so that a document's content does not pass for the action taken on it:
 * - action classes (what the workflow is about to do: file, send out, advise…) read
 *   proposed_action only. A pasted brief that says "Plaintiff filed a motion" is not a filing.
 * - content markers (what the action carries: privileged or confidential material, cited
 *   authority) read proposed_action and redacted_text.
 *
 * Limits are stated in the ruleset's classification claim boundary (ruleset.ts): English only,
 * keyword-based, blind to paraphrase, negation and attachments.
 */

export const ACTION_CLASS_IDS = [
  'filing',
  'external-send',
  'client-communication',
  'legal-advice',
  'client-decision',
  'drafting',
  'research',
  'citing-authority',
  'privileged-material',
  'confidential-information',
] as const;
export type ActionClassId = (typeof ACTION_CLASS_IDS)[number];

/** The request texts a class may read; both stay in memory only (gate/decide.ts GateInput). */
export type TextField = 'proposed_action' | 'redacted_text';

export interface ActionClassSpec {
  id: ActionClassId;
  kind: 'action' | 'content';
  description: string;
  reads: TextField[];
  patterns: string[];
}

const ACTION: TextField[] = ['proposed_action'];
const CONTENT: TextField[] = ['proposed_action', 'redacted_text'];

/** A few words of filler between a verb and its object: bounded, so matching stays linear. */
const GAP = '(?:\\s+\\S+){0,8}?';
const SEND_VERBS =
  'send|sends|sent|sending|e-?mail(?:s|ed|ing)?|forward(?:s|ed|ing)?|transmit(?:s|ted|ting)?|share[sd]?|sharing|' +
  'deliver(?:s|ed|ing)?|disclose[sd]?|disclosing|produce[sd]?|producing|upload(?:s|ed|ing)?|post(?:s|ed|ing)?|' +
  'publish(?:es|ed|ing)?|fax(?:es|ed|ing)?|mail(?:s|ed|ing)?|serve[sd]?|serving';
/** Recipients outside the firm and its client: third parties, the other side, the public, public AI tools. */
const OUTSIDERS =
  'opposing\\s+(?:counsel|part(?:y|ies))|other\\s+side|counter-?part(?:y|ies)|third[-\\s]part(?:y|ies)|' +
  'adverse\\s+part(?:y|ies)|experts?|vendors?|press|media|reporters?|journalists?|regulators?|insurers?|auditors?|' +
  'public|website|social\\s+media|chatgpt|external\\s+\\S+';
const TRIBUNALS = 'court(?!\\s+reporters?\\b)|tribunal|clerk|judge|docket|registry|arbitrators?|panel|board|commission|USPTO|PTAB|TTAB';
const PAPERS =
  'motion|brief|exhibit|complaint|answer|petition|pleading|notice|reply|opposition|appeal|declaration|affidavit|memorandum|' +
  'response|objection|counterclaim|cross-claim|stipulation|proposed\\s+order|lawsuit|suit';
const ARTICLE = '(?:the\\s+|a\\s+|an\\s+|our\\s+|my\\s+|their\\s+|its\\s+|this\\s+|that\\s+)?';
/** "client file", "client number"… name the client's records, not a message to the client. */
const NOT_RECORDS = '(?!\\s+(?:files?|matters?|numbers?|ids?|folders?|data|records|documents|information|portal)\\b)';

export const ACTION_CLASSES: ActionClassSpec[] = [
  {
    id: 'filing',
    kind: 'action',
    description: 'Submitting papers to a court, tribunal or its clerk (ABA Model Rule 3.3; Fed. R. Civ. P. 11).',
    reads: ACTION,
    patterns: [
      '\\be-?fil(?:e|es|ed|ing)\\b',
      '\\b(?:CM/)?ECF\\b',
      `\\bfil(?:e|es|ed|ing)\\b${GAP}\\s+(?:with|in|before|to)\\s+${ARTICLE}(?:\\S+\\s+){0,3}?(?:${TRIBUNALS})\\b`,
      `\\bfil(?:e|es|ed|ing)\\s+${ARTICLE}(?:\\S+\\s+){0,3}?(?:${PAPERS})s?\\b`,
      `\\bsubmit(?:s|ted|ting)?\\b${GAP}\\s+(?:to|with)\\s+${ARTICLE}(?:\\S+\\s+){0,3}?(?:${TRIBUNALS})\\b`,
      `\\blodg(?:e|es|ed|ing)\\b${GAP}\\s+with\\s+${ARTICLE}(?:${TRIBUNALS})\\b`,
    ],
  },
  {
    id: 'external-send',
    kind: 'action',
    description: 'Sending, sharing, producing or publishing to someone outside the firm and its client, including a public AI tool.',
    reads: ACTION,
    patterns: [
      `\\b(?:${SEND_VERBS})\\b(?:\\s+\\S+){0,8}?\\s+(?:to|with|on|onto|into|for)\\s+${ARTICLE}(?:${OUTSIDERS})\\b`,
      "\\bcc(?:'?d)?\\s+(?:the\\s+)?(?:opposing\\s+counsel|other\\s+side|counter-?party)\\b",
      '\\bpress\\s+release\\b',
      '\\b(?:post|publish|release)(?:s|es|ed|ing)?\\s+(?:\\S+\\s+){0,3}?publicly\\b',
    ],
  },
  {
    id: 'client-communication',
    kind: 'action',
    description: 'Writing to, calling or updating the client (ABA Model Rule 1.4).',
    reads: ACTION,
    patterns: [
      `\\b(?:to|with|for)\\s+(?:the\\s+|our\\s+|my\\s+)?clients?\\b${NOT_RECORDS}`,
      '\\bclient\\s+(?:letter|e-?mail|update|memo|alert|advisory|call|message|communication|report)s?\\b',
      `\\b(?:e-?mail|call|message|text|update|advise|inform|notify|tell|reply\\s+to|respond\\s+to|write\\s+to|contact)\\s+(?:the\\s+|our\\s+|my\\s+)?clients?\\b${NOT_RECORDS}`,
    ],
  },
  {
    id: 'legal-advice',
    kind: 'action',
    description: 'Advising someone on their legal position or what to do about it (ABA Model Rules 5.5, 5.3).',
    reads: ACTION,
    patterns: [
      '\\blegal\\s+(?:advice|opinion)s?\\b',
      '\\bopinion\\s+letter\\b',
      '\\b(?:advise[sd]?|advising|counsel(?:s|ed|ing)?|recommend(?:s|ed|ing)?\\s+(?:that\\s+)?)\\s*(?:the\\s+|our\\s+|my\\s+)?(?:clients?|them|him|her|you)\\b',
      '\\b(?:you|she|he|they|the\\s+client)\\s+should\\s+(?:not\\s+)?(?:sue|settle|plead|sign|accept|reject|appeal|file|agree|waive|testify)\\b',
      '\\b(?:your|their|his|her)\\s+legal\\s+(?:rights|options|position|exposure|liability)\\b',
    ],
  },
  {
    id: 'client-decision',
    kind: 'action',
    description: 'A decision the client reserves: settling, a plea, waiving a jury or an appeal (ABA Model Rule 1.2(a)).',
    reads: ACTION,
    patterns: [
      '\\b(?:accept(?:s|ed|ing)?|reject(?:s|ed|ing)?|decline[sd]?|declining|agree(?:s|d)?\\s+to|enter(?:s|ed)?\\s+into|sign(?:s|ed)?|make|makes|made|counter(?:s|ed)?|propose[sd]?|extend(?:s|ed)?)\\s+(?:\\S+\\s+){0,3}?(?:settlement|plea|offer)s?\\b',
      '\\bsettle[sd]?\\s+(?:the\\s+|this\\s+|our\\s+)?(?:case|matter|claims?|dispute|lawsuit|suit|action)\\b',
      '\\bsettlement\\s+authority\\b',
      '\\bwaiv(?:e|es|ed|ing)\\s+(?:\\S+\\s+){0,2}?(?:jury|trial|appeal)\\b',
      '\\bplead(?:s|ed)?\\s+(?:guilty|no\\s+contest|nolo)\\b',
      '\\bplea\\s+(?:deal|bargain|agreement|offer)s?\\b',
      '\\b(?:take|drop|abandon|forgo)\\s+(?:the\\s+|an\\s+)?appeal\\b',
    ],
  },
  {
    id: 'drafting',
    kind: 'action',
    description: 'Drafting, redlining or revising text.',
    reads: ACTION,
    patterns: [
      '\\b(?:draft(?:s|ed|ing)?|redline[sd]?|redlining|red-lin(?:e|es|ed|ing)|markup|mark(?:s|ed|ing)?\\s+up|revis(?:e|es|ed|ing)|rewrit(?:e|es|ing|ten)|edit(?:s|ed|ing)?|compos(?:e|es|ed|ing)|write|writes|writing)\\b',
    ],
  },
  {
    id: 'research',
    kind: 'action',
    description: 'Legal research: finding, checking or summarising authority (ABA Model Rule 1.1).',
    reads: ACTION,
    patterns: [
      '\\bresearch(?:es|ed|ing)?\\b',
      '\\blook\\s+up\\b',
      '\\b(?:find|search\\s+for|search|pull|locate)\\s+(?:\\S+\\s+){0,3}?(?:cases|case\\s+law|precedents?|authorit(?:y|ies)|decisions|opinions|rulings|statutes|regulations)\\b',
      '\\b(?:shepardi[sz]|keycit)\\w*',
      '\\bsummari[sz]e\\s+(?:\\S+\\s+){0,3}?(?:case\\s+law|holdings?|decisions?|opinions?|rulings?|statutes?|precedents?)\\b',
    ],
  },
  {
    id: 'citing-authority',
    kind: 'content',
    description: 'Citing cases, statutes or rules: case names, reporter and code citations, the section sign.',
    reads: CONTENT,
    patterns: [
      '\\bcit(?:e|es|ed|ing|ation|ations)\\b',
      '\\b(?:case\\s+law|precedents?|(?:controlling|binding|persuasive|legal)\\s+authorit(?:y|ies))\\b',
      // A case name, "Smith v. Jones": only the letters either side are needed, which keeps matching linear.
      '\\w\\s+v\\.\\s+\\w',
      "\\b\\d{1,4}\\s+(?:U\\.\\s?S\\.|S\\.\\s?Ct\\.|L\\.\\s?Ed\\.(?:\\s?2d)?|F\\.\\s?(?:2d|3d|4th)|F\\.\\s?Supp\\.(?:\\s?(?:2d|3d))?|F\\.\\s?App(?:'|’)?x|A\\.\\s?(?:2d|3d)|N\\.E\\.(?:2d|3d)|N\\.W\\.2d|S\\.E\\.2d|S\\.W\\.(?:2d|3d)|So\\.\\s?(?:2d|3d)|P\\.(?:2d|3d)|Cal\\.\\s?Rptr\\.(?:\\s?(?:2d|3d))?|N\\.Y\\.S\\.(?:2d|3d))\\s+\\d{1,5}\\b",
      '\\b\\d{1,3}\\s+(?:U\\.\\s?S\\.\\s?C\\.|C\\.\\s?F\\.\\s?R\\.)',
      '§',
      '\\bFed\\.\\s?R\\.\\s?(?:Civ|Crim|App|Evid|Bankr)\\.',
    ],
  },
  {
    id: 'privileged-material',
    kind: 'content',
    description: 'Attorney-client privileged material or work product (Fed. R. Evid. 502; Fed. R. Civ. P. 26(b)(3)).',
    reads: CONTENT,
    patterns: [
      // Not "non-privileged", and not a privilege log, which is served on the other side by design.
      '(?<![\\w-])privileged?\\b(?!\\s+logs?\\b)',
      '\\battorney[-\\s]client\\b',
      '\\bwork[-\\s]product\\b',
      '\\b(?:litigation|legal|trial|settlement)\\s+strategy\\b',
      '\\bmental\\s+impressions\\b',
    ],
  },
  {
    id: 'confidential-information',
    kind: 'content',
    description: 'Confidential client information or personal identifiers (ABA Model Rule 1.6; Fed. R. Civ. P. 5.2).',
    reads: CONTENT,
    patterns: [
      '(?<![\\w-])confidential\\b',
      "\\b(?:social\\s+security\\s+(?:number|no\\.?)s?|SSNs?|tax\\s+(?:id|identification)\\s+(?:number|no\\.?)s?|dates?\\s+of\\s+birth|DOB|passport\\s+(?:number|no\\.?)s?|driver(?:'|’)?s\\s+licen[cs]es?|bank\\s+accounts?|account\\s+numbers?|credit\\s+cards?|medical\\s+records?|health\\s+(?:information|records?)|PHI|PII|personal\\s+data|personally\\s+identifiable|trade\\s+secrets?)\\b",
      '\\b\\d{3}-\\d{2}-\\d{4}\\b',
      "\\bclient(?:'|’)?s?\\s+(?:files?|data|records|documents|information|secrets)\\b",
    ],
  },
];
