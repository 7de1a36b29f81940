/**
 * The core law engine behind the law pack (interface-spec "What the service does" 2),
 * registered in gate/decide.ts ENGINES as 'law-core'.
 *
 *   classes.ts  action classes and their published phrase patterns
 *   rules.ts    the rules as data, over classes and law_context, one dimension each
 *   ruleset.ts  the ruleset as one JSON value, its version and rules_digest
 *   classify.ts text → class ids (in memory; nothing of the text comes out)
 *   engine.ts   classes + context → rule hits and a per-dimension summary
 */
import type { PackEngine } from '../decide.ts';
import { evaluateLaw } from './engine.ts';
import { LAW_ENGINE_VERSION, LAW_RULES_DIGEST } from '../../packs/law-ruleset/ruleset.ts';

export { ACTION_CLASS_IDS } from '../../packs/law-ruleset/classes.ts';
export type { ActionClassId } from '../../packs/law-ruleset/classes.ts';
export { actionClasses, classifyText } from './classify.ts';
export { evaluateLaw, jurisdictionGroup } from './engine.ts';
export type { LawEvaluation, LawRuleHit } from './engine.ts';
export { LAW_DIMENSIONS } from '../../packs/law-ruleset/rules.ts';
export type { LawDimension, LawRule } from '../../packs/law-ruleset/rules.ts';
export { CLASSIFICATION_BOUNDARY, LAW_ENGINE_ID, LAW_ENGINE_VERSION, LAW_RULES_DIGEST, LAW_RULESET, rulesetDigest } from '../../packs/law-ruleset/ruleset.ts';

/**
 * The law engine as a pack engine: its hits become the decision's findings, and the facts a
 * verifier needs to re-derive them (engine version, rules digest, the class ids, the
 * per-dimension summary) are committed in the seal's attestation context.
 */
export const lawCoreEngine: PackEngine = (_manifest, actionType, input) => {
  const e = evaluateLaw({ actionType, context: input.context, text: input.text });
  return {
    hits: e.hits,
    facts: { engine_version: LAW_ENGINE_VERSION, rules_digest: LAW_RULES_DIGEST, action_classes: e.classes, dimensions: e.dimensions },
  };
};
