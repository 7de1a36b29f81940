/**
 * The gate decision (interface-spec "What the service does" 1–3, States and transitions):
 * a pack's manifest and the tenant's policy overlay turn a validated request into allow,
 * needs_review or blocked, plus the review route, next step and catalog refs the response
 * carries and the facts the seal commits.
 *
 * Pure and deterministic: no I/O, no clock, no randomness. The same pack, request and overlay
 * always give the same decision, so a seal's manifest_digest and policy_digest (and for law the
 * committed engine_version and rules_digest) are enough to re-derive why it was made.
 *
 * Precedence is blocked > needs_review > allow. A pack's default for an action type is the one
 * finding a tenant may waive (by allowlisting the action type: "the usual outcome for a fresh
 * sandbox, until the tenant allowlists the action type"); pack rules and tenant denies only
 * ever raise the decision.
 */
import type { Decision, GateManifest } from '../packs/manifest.ts';
import type { GatePack } from '../packs/registry.ts';
import { EMPTY_OVERLAY } from '../policy/policy-overlay.ts';
import type { PolicyOverlay } from '../policy/policy-overlay.ts';
import { lawCoreEngine } from './law-engine/index.ts';

/** What the decision reads from a validated gate request. */
export interface GateInput {
  action_type?: string | undefined;
  context: Readonly<Record<string, unknown>>;
  /**
   * The request's texts, for an engine that classifies them (the law engine). In memory only:
   * engines return rule ids, class ids and their rules' fixed reasons, so nothing of the text
   * reaches findings, next_step, catalog_refs or the committed context (interface-spec
   * "What the service does" 7).
   */
  text?: GateText | undefined;
}

export interface GateText {
  proposed_action?: string | undefined;
  redacted_text?: string | undefined;
}

/**
 * The decision's view of a validated gate body, built in one place so the gate and the policy
 * preview decide on exactly the same input.
 */
export function gateInput(pack: GatePack, body: Readonly<Record<string, unknown>>): GateInput {
  const actionType = body.action_type;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    action_type: typeof actionType === 'string' ? actionType : undefined,
    context: (body[pack.manifest.context_field] ?? {}) as Readonly<Record<string, unknown>>,
    text: { proposed_action: str(body.proposed_action), redacted_text: str(body.redacted_text) },
  };
}

/** One reason the decision is what it is; ids are committed in the seal and listed as catalog refs. */
export interface Finding {
  rule: string;
  source: 'pack' | 'policy';
  effect: Decision;
  /** The law engine's grading-mirror dimension of the rule (packs/law-ruleset/rules.ts). */
  dimension?: string;
  /** Set on a pack default the tenant's allow list waived; it no longer counts. */
  waived?: true;
}

export interface GateDecision {
  decision: Decision;
  actionType: string;
  /** `<channel>:<target>` when the decision is needs_review, else null (interface-spec Gate response). */
  reviewRoute: string | null;
  nextStep: string;
  /** Why, one per deciding finding: its sealed rule id and an employee-safe explanation. */
  reasons: DecisionReason[];
  catalogRefs: string[];
  manifestDigest: string;
  policyDigest: string | null;
  /** Committed in the seal's attestation: raw-safe facts only (ids, versions, effects). */
  context: {
    engine: string;
    pack_version: string;
    action_type: string;
    findings: Finding[];
  } & Partial<EngineFacts>;
}

/**
 * One reason for the decision (interface-spec Gate response, `reasons`): a rule id that the
 * seal commits in context.findings, and a fixed explanation from the pack or the policy
 * overlay, never built from the request, so it is safe to show the employee and the reviewer.
 */
export interface DecisionReason {
  rule: string;
  explanation: string;
}

/** A pack rule that fired: its id and effect are committed; its reason and route shape the answer. */
export interface RuleHit {
  rule: string;
  effect: 'needs_review' | 'blocked';
  /** Employee-safe, fixed by the rule (never built from the request); appended to next_step. */
  reason: string;
  dimension?: string;
  /** Where a needs_review this rule decides is routed, unless the tenant's policy routes the action type. */
  review_route?: string | undefined;
}

/** What an engine adds to the committed context so a verifier can re-derive its hits. */
export interface EngineFacts {
  engine_version: string;
  rules_digest: string;
  action_classes: string[];
  dimensions: Record<string, Decision>;
}

export interface EngineResult {
  hits: RuleHit[];
  facts?: EngineFacts;
}

/** Evaluates a pack's own rules. */
export type PackEngine = (manifest: GateManifest, actionType: string, input: GateInput) => EngineResult;

/**
 * Engines by manifest `engine.id`. law-core is the core law engine (interface-spec "What the
 * service does" 2, law-engine/); it runs after any rules the law manifest itself lists.
 */
const ENGINES: Readonly<Record<string, PackEngine>> = {
  'law-core': (m, actionType, input) => {
    const law = lawCoreEngine(m, actionType, input);
    return { ...law, hits: [...manifestRules(m, actionType, input).hits, ...law.hits] };
  },
  'manifest-rules': manifestRules,
};

const RANK: Record<Decision, number> = { allow: 0, needs_review: 1, blocked: 2 };

export function decide(pack: GatePack, input: GateInput, overlay: PolicyOverlay = EMPTY_OVERLAY): GateDecision {
  const m = pack.manifest;
  const actionType = input.action_type ?? m.default_action_type;
  const spec = m.action_types.find((a) => a.id === actionType);
  if (actionType === null || spec === undefined) {
    // The route's schema only admits the manifest's action types; reaching this is a bug.
    throw new Error(`pack ${m.name}: unknown action type ${String(actionType)}`);
  }
  const engine = ENGINES[m.engine.id];
  if (engine === undefined) throw new Error(`pack ${m.name}: no engine ${m.engine.id}`);

  const base: Finding = { rule: `${m.name}.default.${actionType}`, source: 'pack', effect: spec.default_decision };
  const findings: Finding[] = [base];
  if (base.effect === 'needs_review' && overlay.allow_action_types.includes(actionType)) {
    base.waived = true;
    findings.push({ rule: `policy.allow.${actionType}`, source: 'policy', effect: 'allow' });
  }
  const result = engine(m, actionType, input);
  for (const h of result.hits) findings.push({ rule: h.rule, source: 'pack', effect: h.effect, ...(h.dimension ? { dimension: h.dimension } : {}) });
  if (overlay.review_action_types.includes(actionType)) findings.push({ rule: `policy.review.${actionType}`, source: 'policy', effect: 'needs_review' });
  if (overlay.deny_action_types.includes(actionType)) findings.push({ rule: `policy.deny.${actionType}`, source: 'policy', effect: 'blocked' });

  let decision: Decision = 'allow';
  for (const f of findings) if (!f.waived && RANK[f.effect] > RANK[decision]) decision = f.effect;

  // The rules that decided: their reasons go into next_step, the first one's route (if any) into review_route.
  const deciding = result.hits.filter((h) => h.effect === decision);
  const ruleRoute = deciding.find((h) => h.review_route !== undefined)?.review_route;
  const reviewRoute =
    decision === 'needs_review' ? (overlay.review_routes[actionType] ?? ruleRoute ?? spec.review_route ?? m.review_route) : null;
  const catalogRefs = unique([
    ...m.catalog_refs,
    `action-type:${m.name}:${actionType}`,
    ...findings.filter((f) => !f.waived).map((f) => `rule:${f.rule}`),
    ...(reviewRoute ? [`route:${reviewRoute}`] : []),
    ...(overlay.digest ? [`policy:${overlay.digest}`] : []),
  ]);

  return {
    decision,
    actionType,
    reviewRoute,
    nextStep: nextStep(m.next_step[decision], deciding),
    reasons: reasonsFor(findings, decision, result.hits, spec.title),
    catalogRefs,
    manifestDigest: pack.digest,
    policyDigest: overlay.digest,
    context: { engine: `${m.engine.id}@${m.engine.version}`, pack_version: m.version, action_type: actionType, findings, ...result.facts },
  };
}

/**
 * The pack's instruction for the decision, then why, from the deciding rules' fixed reasons
 * (interface-spec Gate response: an employee-safe instruction: a short reason naming
 * the dimension). No rule, no reason: a pack default or a tenant policy speaks for itself.
 */
function nextStep(instruction: string, deciding: readonly RuleHit[]): string {
  const why = unique(deciding.map((h) => (h.dimension ? `Why (${h.dimension.replaceAll('_', ' ')}): ${h.reason}` : `Why: ${h.reason}`)));
  return [instruction, ...why].join(' ');
}

/**
 * The findings that decided, explained: a pack rule by its fixed reason, a pack default or a
 * tenant policy entry by what it means for this action type.
 */
function reasonsFor(findings: readonly Finding[], decision: Decision, hits: readonly RuleHit[], title: string): DecisionReason[] {
  const reasonOf = new Map(hits.map((h) => [h.rule, h.reason]));
  const defaults: Record<Decision, string> = {
    needs_review: `“${title}” needs review until your organisation allowlists this action type.`,
    blocked: `“${title}” is not allowed by this pack.`,
    allow: `“${title}” is allowed by this pack.`,
  };
  const policy: Record<Decision, string> = {
    allow: `Your organisation allowlisted “${title}”.`,
    needs_review: `Your organisation’s policy requires review of “${title}”.`,
    blocked: `Your organisation’s policy does not allow “${title}”.`,
  };
  const out: DecisionReason[] = [];
  for (const f of findings) {
    if (f.waived || f.effect !== decision || out.some((r) => r.rule === f.rule)) continue;
    const explanation = f.source === 'policy' ? policy[f.effect] : (reasonOf.get(f.rule) ?? defaults[f.effect]);
    out.push({ rule: f.rule, explanation });
  }
  return out;
}

/**
 * A manifest rule fires when its action types (if any) include this one, every `when` context
 * condition holds, and not every `unless` condition holds. A condition on an absent key never
 * holds.
 */
function manifestRules(manifest: GateManifest, actionType: string, input: GateInput): EngineResult {
  const holds = (conditions: Readonly<Record<string, readonly (string | boolean)[]>>) =>
    Object.entries(conditions).every(([k, allowed]) => {
      const v = input.context[k];
      return (typeof v === 'string' || typeof v === 'boolean') && allowed.includes(v);
    });
  const hits: RuleHit[] = [];
  for (const rule of manifest.rules) {
    if (rule.when.action_types && !rule.when.action_types.includes(actionType)) continue;
    if (!holds(rule.when.context)) continue;
    if (rule.unless && holds(rule.unless.context)) continue;
    hits.push({ rule: rule.id, effect: rule.effect, reason: rule.reason, ...(rule.review_route ? { review_route: rule.review_route } : {}) });
  }
  return { hits };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
