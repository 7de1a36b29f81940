/**
 * The law engine's ruleset: everything that decides, in one JSON value, and its digest
 * (interface-spec "What the service does" 2; DESIGN.md §3).
 *
 * rules_digest = lowercase hex SHA-256 of the RFC 8785 (JCS) bytes of LAW_RULESET. The ruleset
 * holds the classes with their patterns, the classes each action type implies, the
 * jurisdiction groups and the rules, so a seal that commits engine_version and rules_digest
 * pins every input to its decision except the request itself, which payload_hash commits and
 * the caller keeps. GET /v1/packs publishes the ruleset verbatim beside its digest.
 *
 * It is data of the law pack, so it lives with the packs; the engine that applies it
 * (gate/law-engine/) reads it from here, and the pack manifest commits its digest.
 */
import { canonicalBytes } from '../../../shared/canonical-json.ts';
import { sha256Hex } from '../../../shared/hash.ts';
import { ACTION_CLASS_IDS, ACTION_CLASSES } from './classes.ts';
import type { ActionClassSpec } from './classes.ts';
import { ACTION_TYPE_CLASSES, JURISDICTION_GROUPS, LAW_CONDITION_KEYS, LAW_DIMENSIONS, LAW_RULES } from './rules.ts';
import type { LawRule } from './rules.ts';

/** Bump on any change to how the ruleset is evaluated; a change to the data alone changes the digest. */
export const LAW_ENGINE_VERSION = '1.0.0';
export const LAW_ENGINE_ID = 'law-core';

/** What classification can and cannot do; published with the classes and repeated in the law claim boundary. */
export const CLASSIFICATION_BOUNDARY =
  'Classification is keyword-based on English text: it can miss paraphrases, does not understand negation ' +
  '("do not file" still reads as filing), and cannot read attachments. It is a routing aid, not legal advice.';

export interface LawRuleset {
  engine: { id: string; version: string };
  dimensions: readonly string[];
  classification: {
    method: string;
    language: 'en';
    pattern_flags: 'i';
    claim_boundary: string;
    classes: ActionClassSpec[];
  };
  action_type_classes: Record<string, string[]>;
  jurisdiction_groups: Record<string, string[]>;
  condition_keys: readonly string[];
  rules: LawRule[];
}

export const LAW_RULESET: LawRuleset = deepFreeze(
  check({
    engine: { id: LAW_ENGINE_ID, version: LAW_ENGINE_VERSION },
    dimensions: LAW_DIMENSIONS,
    classification: {
      method:
        'A class applies when any of its patterns matches one of the texts it reads. Action classes read proposed_action; ' +
        'content classes read proposed_action and redacted_text. The action type adds the classes action_type_classes lists.',
      language: 'en',
      pattern_flags: 'i',
      claim_boundary: CLASSIFICATION_BOUNDARY,
      classes: ACTION_CLASSES,
    },
    action_type_classes: ACTION_TYPE_CLASSES,
    jurisdiction_groups: JURISDICTION_GROUPS,
    condition_keys: LAW_CONDITION_KEYS,
    rules: LAW_RULES,
  }),
);

export const LAW_RULES_DIGEST: string = sha256Hex(canonicalBytes(LAW_RULESET));

export function rulesetDigest(ruleset: LawRuleset): string {
  return sha256Hex(canonicalBytes(ruleset));
}

/** Cross-field checks a type cannot express; a bad ruleset stops startup. */
function check(r: LawRuleset): LawRuleset {
  const fail = (why: string): never => {
    throw new Error(`law ruleset: ${why}`);
  };
  const classes = new Set<string>(ACTION_CLASS_IDS);
  if (r.classification.classes.map((c) => c.id).join() !== ACTION_CLASS_IDS.join()) fail('classes out of step with ACTION_CLASS_IDS');
  for (const c of r.classification.classes) {
    for (const p of c.patterns) {
      try {
        new RegExp(p, r.classification.pattern_flags);
      } catch (e) {
        fail(`class ${c.id}: bad pattern ${p}: ${(e as Error).message}`);
      }
    }
  }
  for (const [type, implied] of Object.entries(r.action_type_classes)) {
    for (const c of implied) if (!classes.has(c)) fail(`action type ${type} implies unknown class ${c}`);
  }
  const ids = new Set<string>();
  for (const rule of r.rules) {
    if (ids.has(rule.id)) fail(`duplicate rule ${rule.id}`);
    ids.add(rule.id);
    const w = rule.when;
    const named = [...(w.all_classes ?? []), ...(w.any_classes ?? [])];
    for (const c of named) if (!classes.has(c)) fail(`rule ${rule.id} names unknown class ${c}`);
    for (const k of [...Object.keys(w.context ?? {}), ...Object.keys(rule.unless?.context ?? {})]) {
      if (!(r.condition_keys as readonly string[]).includes(k)) fail(`rule ${rule.id} names unknown context key ${k}`);
    }
    if (named.length === 0 && Object.keys(w.context ?? {}).length === 0) fail(`rule ${rule.id} has no condition`);
    if (w.any_classes?.length === 0 || w.all_classes?.length === 0) fail(`rule ${rule.id} has an empty class list`);
  }
  return r;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
