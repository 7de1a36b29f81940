/**
 * Rule-based classification of a proposed action into action classes (classes.ts). Pure: the
 * texts are read in memory and only class ids come out, in the fixed order of
 * ACTION_CLASS_IDS, so nothing of the text (not even which words matched) leaves this module.
 * The claim boundary of what this can do is ruleset.ts CLASSIFICATION_BOUNDARY.
 */
import { ACTION_CLASS_IDS } from '../../packs/law-ruleset/classes.ts';
import type { ActionClassId, TextField } from '../../packs/law-ruleset/classes.ts';
import { LAW_RULESET } from '../../packs/law-ruleset/ruleset.ts';

export type ClassifierText = Partial<Record<TextField, string | undefined>>;

interface CompiledClass {
  id: ActionClassId;
  reads: readonly TextField[];
  /** The class's patterns, as one alternation where they allow it: some() of them matches. */
  patterns: readonly RegExp[];
}

/** A backreference names a group by number or name, which an alternation of patterns would renumber. */
const BACKREFERENCE = /\\(?:[1-9]|k<)/;

/**
 * One alternation of the patterns: each is a group of its own, so it matches a text exactly
 * where one of them does, and test() answers as some() over the patterns would, in one scan of
 * the text instead of one per pattern. Patterns with a backreference are kept apart.
 */
function compilePatterns(patterns: readonly string[], flags: string): RegExp[] {
  if (patterns.length > 1 && !patterns.some((p) => BACKREFERENCE.test(p))) return [new RegExp(patterns.map((p) => `(?:${p})`).join('|'), flags)];
  return patterns.map((p) => new RegExp(p, flags));
}

// Compiled once from the published ruleset, so the patterns that run are the ones the digest
// commits. Its flags are not stateful (g, y), so test() reads no lastIndex.
const COMPILED: readonly CompiledClass[] = LAW_RULESET.classification.classes.map((c) => ({
  id: c.id,
  reads: c.reads,
  patterns: compilePatterns(c.patterns, LAW_RULESET.classification.pattern_flags),
}));

/** COMPILED lists the classes in ACTION_CLASS_IDS order, so what it finds needs no sorting. */
const IN_ID_ORDER = COMPILED.every((c, i) => i === 0 || ACTION_CLASS_IDS.indexOf(COMPILED[i - 1]!.id) < ACTION_CLASS_IDS.indexOf(c.id));

/** The classes the texts show, in ACTION_CLASS_IDS order; [] for no text. */
export function classifyText(text: ClassifierText): ActionClassId[] {
  const found: ActionClassId[] = [];
  for (const c of COMPILED) {
    for (const field of c.reads) {
      const t = text[field];
      if (typeof t === 'string' && t !== '' && matchesAny(c.patterns, t)) {
        found.push(c.id);
        break;
      }
    }
  }
  return found;
}

/** some() of the patterns, without a closure per class and text. */
function matchesAny(patterns: readonly RegExp[], text: string): boolean {
  for (const p of patterns) if (p.test(text)) return true;
  return false;
}

/** Text classes plus the classes the action type implies, deduplicated, in ACTION_CLASS_IDS order. */
export function actionClasses(actionType: string, text: ClassifierText): ActionClassId[] {
  const implied = LAW_RULESET.action_type_classes[actionType] ?? [];
  const found = classifyText(text);
  if (implied.length === 0 && IN_ID_ORDER) return found;
  const set = new Set<string>([...found, ...implied]);
  return ACTION_CLASS_IDS.filter((id) => set.has(id));
}
