/**
 * Evaluation of the law ruleset (interface-spec "What the service does" 2): action classes and
 * law_context values in; the rules that fired and a per-dimension summary out.
 *
 * Pure and deterministic: no I/O, clock or randomness, and rules are evaluated in ruleset
 * order, so the same request under the same rules_digest always gives the same hits in the
 * same order. The output carries rule ids, class ids, dimensions and the rules' fixed reasons:
 * never any of the request's text.
 */
import type { Decision } from '../../packs/manifest.ts';
import { actionClasses } from './classify.ts';
import type { ClassifierText } from './classify.ts';
import type { ActionClassId } from '../../packs/law-ruleset/classes.ts';
import { LAW_DIMENSIONS } from '../../packs/law-ruleset/rules.ts';
import type { LawConditionKey, LawDimension, LawRule } from '../../packs/law-ruleset/rules.ts';
import { LAW_RULESET } from '../../packs/law-ruleset/ruleset.ts';

export interface LawRuleHit {
  rule: string;
  dimension: LawDimension;
  effect: LawRule['effect'];
  reason: string;
  review_route?: string;
}

export interface LawEvaluation {
  classes: ActionClassId[];
  hits: LawRuleHit[];
  /** Per dimension, the highest effect among its hits; allow when none fired. */
  dimensions: Record<LawDimension, Decision>;
}

export interface LawEngineInput {
  actionType: string;
  context: Readonly<Record<string, unknown>>;
  text?: ClassifierText | undefined;
}

const RANK: Record<Decision, number> = { allow: 0, needs_review: 1, blocked: 2 };

export function evaluateLaw(input: LawEngineInput): LawEvaluation {
  const classes = actionClasses(input.actionType, input.text ?? {});
  const present = new Set<string>(classes);
  const facts = conditionFacts(input.context);

  const hits: LawRuleHit[] = [];
  for (const rule of LAW_RULESET.rules) {
    const w = rule.when;
    if (w.all_classes && !w.all_classes.every((c) => present.has(c))) continue;
    if (w.any_classes && !w.any_classes.some((c) => present.has(c))) continue;
    if (w.context && !conditionsHold(w.context, facts)) continue;
    if (rule.unless && conditionsHold(rule.unless.context, facts)) continue;
    hits.push({
      rule: rule.id,
      dimension: rule.dimension,
      effect: rule.effect,
      reason: rule.reason,
      ...(rule.review_route !== undefined ? { review_route: rule.review_route } : {}),
    });
  }

  const dimensions = Object.fromEntries(LAW_DIMENSIONS.map((d) => [d, 'allow'])) as Record<LawDimension, Decision>;
  for (const h of hits) if (RANK[h.effect] > RANK[dimensions[h.dimension]]) dimensions[h.dimension] = h.effect;
  return { classes, hits, dimensions };
}

/** The string values rules may test: the law_context keys rules name, plus jurisdiction_group. */
function conditionFacts(context: Readonly<Record<string, unknown>>): Partial<Record<LawConditionKey, string>> {
  const facts: Partial<Record<LawConditionKey, string>> = {};
  for (const key of LAW_RULESET.condition_keys as readonly LawConditionKey[]) {
    const v = context[key];
    if (typeof v === 'string') facts[key] = v;
  }
  if (typeof context.jurisdiction === 'string') facts.jurisdiction_group = jurisdictionGroup(context.jurisdiction);
  return facts;
}

/** ISO 3166-1 country of an ISO 3166-2 region (US-NY → US), grouped by JURISDICTION_GROUPS. */
export function jurisdictionGroup(jurisdiction: string): string {
  const country = jurisdiction.split('-')[0]!;
  for (const [group, countries] of Object.entries(LAW_RULESET.jurisdiction_groups)) if (countries.includes(country)) return group;
  return 'other';
}

function conditionsHold(conditions: Partial<Record<LawConditionKey, string[]>>, facts: Partial<Record<LawConditionKey, string>>): boolean {
  return Object.entries(conditions).every(([k, allowed]) => {
    const v = facts[k as LawConditionKey];
    return v !== undefined && allowed.includes(v);
  });
}
