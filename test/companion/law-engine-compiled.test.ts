/**
 * The law engine's compiled form (companion/gate/law-engine/classify.ts, engine.ts) against the
 * ruleset read as published, rule by rule and pattern by pattern: the same classes, hits and
 * dimensions for every text, action type and law_context of a corpus built from the ruleset's
 * own values. The reference below is the plain reading of LAW_RULESET the compiled form replaces.
 */
import { describe, expect, it } from 'vitest';
import { ACTION_CLASS_IDS, evaluateLaw, jurisdictionGroup, LAW_DIMENSIONS, LAW_RULESET } from '../../companion/gate/law-engine/index.ts';
import type { LawEvaluation } from '../../companion/gate/law-engine/index.ts';

type Conditions = Partial<Record<string, string[]>>;

function referenceClasses(actionType: string, text: Record<string, string | undefined>): string[] {
  const found = new Set<string>(LAW_RULESET.action_type_classes[actionType] ?? []);
  for (const c of LAW_RULESET.classification.classes) {
    const patterns = c.patterns.map((p) => new RegExp(p, LAW_RULESET.classification.pattern_flags));
    if (c.reads.some((f) => typeof text[f] === 'string' && text[f] !== '' && patterns.some((p) => p.test(text[f]!)))) found.add(c.id);
  }
  return ACTION_CLASS_IDS.filter((id) => found.has(id));
}

function referenceGroup(jurisdiction: string): string {
  const country = jurisdiction.split('-')[0]!;
  for (const [group, countries] of Object.entries(LAW_RULESET.jurisdiction_groups)) if (countries.includes(country)) return group;
  return 'other';
}

function reference(actionType: string, context: Record<string, unknown>, text: Record<string, string | undefined>): LawEvaluation {
  const classes = referenceClasses(actionType, text);
  const facts: Record<string, string> = {};
  for (const key of LAW_RULESET.condition_keys) if (typeof context[key] === 'string') facts[key] = context[key] as string;
  if (typeof context.jurisdiction === 'string') facts.jurisdiction_group = referenceGroup(context.jurisdiction);
  const holds = (c: Conditions) => Object.entries(c).every(([k, allowed]) => facts[k] !== undefined && allowed!.includes(facts[k]!));
  const hits = LAW_RULESET.rules
    .filter((r) => {
      const w = r.when;
      if (w.all_classes && !w.all_classes.every((c) => classes.includes(c))) return false;
      if (w.any_classes && !w.any_classes.some((c) => classes.includes(c))) return false;
      if (w.context && !holds(w.context as Conditions)) return false;
      return !(r.unless && holds(r.unless.context as Conditions));
    })
    .map((r) => ({ rule: r.id, dimension: r.dimension, effect: r.effect, reason: r.reason, ...(r.review_route !== undefined ? { review_route: r.review_route } : {}) }));
  const rank = { allow: 0, needs_review: 1, blocked: 2 } as const;
  const dimensions = Object.fromEntries(LAW_DIMENSIONS.map((d) => [d, 'allow'])) as LawEvaluation['dimensions'];
  for (const h of hits) if (rank[h.effect] > rank[dimensions[h.dimension]]) dimensions[h.dimension] = h.effect;
  return { classes: classes as LawEvaluation['classes'], hits, dimensions };
}

const SENTENCES = [
  'File a motion to dismiss citing Smith v. Jones, 123 F.3d 456 (2d Cir. 1997)',
  'E-file the reply brief via CM/ECF',
  'Submit the opposition to the court today',
  'Lodge the proposed order with the clerk',
  'Email the redline to opposing counsel',
  "Upload the client's medical records to ChatGPT",
  'Update the client on the status of the case',
  'Tell the client she should accept the settlement offer',
  'Waive the jury trial',
  'Draft a confidentiality agreement',
  'Research case law on spoliation and summarize the holdings',
  'Under 42 U.S.C. § 1983 the claim fails',
  'Client SSN is 123-45-6789',
  'Prepare a summary of litigation strategy',
  'Send the privileged and confidential memo to the expert',
  'Submit the invoice to the court reporter',
  'Schedule a call with the client file team',
  'Draft a reply to opposing counsel about the discovery schedule in matter 42.',
  'Open the tin can',
  '',
];

describe('the compiled law engine', () => {
  it('classifies, fires rules and sums dimensions as the published ruleset reads, over a corpus of its own values', () => {
    const actionTypes = Object.keys(LAW_RULESET.action_type_classes);
    // Every value a rule's conditions name, one value none names, and absence, per condition key.
    const values = new Map<string, Set<string | undefined>>();
    for (const r of LAW_RULESET.rules) {
      for (const c of [r.when.context, r.unless?.context]) {
        for (const [k, allowed] of Object.entries((c ?? {}) as Conditions)) for (const v of allowed!) (values.get(k) ?? values.set(k, new Set([undefined, 'none-of-these'])).get(k)!).add(v);
      }
    }
    const jurisdictions = ['US-NY', 'US', 'DE-BY', 'GB-ENG', 'NO', 'JP-13', 'XX', ...Object.values(LAW_RULESET.jurisdiction_groups).flat().slice(0, 5)];
    const keys = [...values.keys()].filter((k) => k !== 'jurisdiction_group' && k !== 'jurisdiction');
    let compared = 0;
    const fired = new Set<string>();
    for (let i = 0; i < SENTENCES.length * SENTENCES.length; i++) {
      const a = SENTENCES[i % SENTENCES.length]!;
      const b = SENTENCES[Math.floor(i / SENTENCES.length)]!;
      const text = { proposed_action: a, redacted_text: i % 3 === 0 ? b : undefined };
      const context: Record<string, unknown> = { jurisdiction: jurisdictions[i % jurisdictions.length] };
      keys.forEach((k, j) => {
        const options = [...values.get(k)!];
        const v = options[(i * (j + 7) + j) % options.length];
        if (v !== undefined) context[k] = v;
      });
      const actionType = actionTypes[i % actionTypes.length]!;
      expect(evaluateLaw({ actionType, context, text }), `${actionType} ${JSON.stringify(context)} ${a} | ${b}`).toEqual(reference(actionType, context, text));
      for (const h of reference(actionType, context, text).hits) fired.add(h.rule);
      compared++;
    }
    expect(compared).toBe(SENTENCES.length ** 2);
    // The corpus reaches the rules: most of them fire somewhere in it.
    expect(fired.size, [...fired].join(' ')).toBeGreaterThanOrEqual(Math.ceil(LAW_RULESET.rules.length * 0.6));
  });

  it('groups a jurisdiction by its country as the published groups list it', () => {
    for (const j of ['US-NY', 'US', 'DE-BY', 'GB', 'GB-ENG', 'IS', 'CH-ZH', '', '-', 'us-ny']) expect(jurisdictionGroup(j), j).toBe(referenceGroup(j));
  });
});
