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
  patterns: RegExp[];
}

// Compiled once from the published ruleset, so the patterns that run are the ones the digest commits.
const COMPILED: readonly CompiledClass[] = LAW_RULESET.classification.classes.map((c) => ({
  id: c.id,
  reads: c.reads,
  patterns: c.patterns.map((p) => new RegExp(p, LAW_RULESET.classification.pattern_flags)),
}));

/** The classes the texts show, in ACTION_CLASS_IDS order; [] for no text. */
export function classifyText(text: ClassifierText): ActionClassId[] {
  const found: ActionClassId[] = [];
  for (const c of COMPILED) {
    const hit = c.reads.some((field) => {
      const t = text[field];
      return typeof t === 'string' && t !== '' && c.patterns.some((p) => p.test(t));
    });
    if (hit) found.push(c.id);
  }
  return found;
}

/** Text classes plus the classes the action type implies, deduplicated, in ACTION_CLASS_IDS order. */
export function actionClasses(actionType: string, text: ClassifierText): ActionClassId[] {
  const implied = LAW_RULESET.action_type_classes[actionType] ?? [];
  const set = new Set<string>([...classifyText(text), ...implied]);
  return ACTION_CLASS_IDS.filter((id) => set.has(id));
}
