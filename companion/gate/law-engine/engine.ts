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
import { ACTION_CLASS_IDS } from '../../packs/law-ruleset/classes.ts';
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

/** A rule's conditions as [key, allowed values] pairs; every pair must hold (none: it holds). */
type CompiledConditions = readonly (readonly [LawConditionKey, ReadonlySet<string>])[];

interface CompiledRule {
  rule: LawRule;
  /** all_classes as bits of CLASS_BIT, every one required (0: no such condition). */
  allClasses: number;
  /** any_classes as bits of CLASS_BIT, one required; undefined: no such condition. */
  anyClasses: number | undefined;
  when: CompiledConditions | undefined;
  unless: CompiledConditions | undefined;
}

/** One bit per action class, so a rule's class conditions are masks tested against the request's classes. */
const CLASS_BIT = new Map<string, number>(ACTION_CLASS_IDS.map((id, i) => [id, 2 ** i]));
/** The bit of a class no text or action type ever yields (the ruleset's own check refuses one): never found. */
const NEVER_FOUND = 2 ** 30;

function classMask(classes: readonly string[]): number {
  let mask = 0;
  for (const c of classes) mask |= CLASS_BIT.get(c) ?? NEVER_FOUND;
  return mask;
}

const compileConditions = (conditions: Partial<Record<LawConditionKey, string[]>>): CompiledConditions =>
  Object.entries(conditions).map(([k, allowed]) => [k as LawConditionKey, new Set(allowed)] as const);

// Compiled once from the published ruleset, in its order, so the rules that run are the ones the digest commits.
const RULES: readonly CompiledRule[] = LAW_RULESET.rules.map((rule) => ({
  rule,
  allClasses: rule.when.all_classes ? classMask(rule.when.all_classes) : 0,
  anyClasses: rule.when.any_classes ? classMask(rule.when.any_classes) : undefined,
  when: rule.when.context ? compileConditions(rule.when.context) : undefined,
  unless: rule.unless ? compileConditions(rule.unless.context) : undefined,
}));

/** Country → its group: the first group of LAW_RULESET.jurisdiction_groups that lists it. */
const GROUP_OF = new Map<string, string>();
for (const [group, countries] of Object.entries(LAW_RULESET.jurisdiction_groups)) for (const c of countries) if (!GROUP_OF.has(c)) GROUP_OF.set(c, group);

const NO_TEXT: ClassifierText = Object.freeze({});

export function evaluateLaw(input: LawEngineInput): LawEvaluation {
  const classes = actionClasses(input.actionType, input.text ?? NO_TEXT);
  const facts = conditionFacts(input.context);
  let found = 0;
  for (const c of classes) found |= CLASS_BIT.get(c) ?? 0;

  const hits: LawRuleHit[] = [];
  for (const { rule, allClasses, anyClasses, when, unless } of RULES) {
    if ((found & allClasses) !== allClasses) continue;
    if (anyClasses !== undefined && (found & anyClasses) === 0) continue;
    if (when && !conditionsHold(when, facts)) continue;
    if (unless && conditionsHold(unless, facts)) continue;
    hits.push({
      rule: rule.id,
      dimension: rule.dimension,
      effect: rule.effect,
      reason: rule.reason,
      ...(rule.review_route !== undefined ? { review_route: rule.review_route } : {}),
    });
  }

  const dimensions = {} as Record<LawDimension, Decision>;
  for (const d of LAW_DIMENSIONS) dimensions[d] = 'allow';
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
  const dash = jurisdiction.indexOf('-');
  return GROUP_OF.get(dash === -1 ? jurisdiction : jurisdiction.slice(0, dash)) ?? 'other';
}

function conditionsHold(conditions: CompiledConditions, facts: Partial<Record<LawConditionKey, string>>): boolean {
  for (const [k, allowed] of conditions) {
    const v = facts[k];
    if (v === undefined || !allowed.has(v)) return false;
  }
  return true;
}
