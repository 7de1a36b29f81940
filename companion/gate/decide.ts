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
    const own = m.rules.length === 0 ? [] : manifestRules(m, actionType, input).hits;
    return { ...law, hits: own.length === 0 ? law.hits : [...own, ...law.hits] };
  },
  'manifest-rules': manifestRules,
};

const RANK: Record<Decision, number> = { allow: 0, needs_review: 1, blocked: 2 };

/** What decide() says of one action type of a manifest, whatever the request: made once per manifest. */
interface ActionTypeTexts {
  spec: GateManifest['action_types'][number];
  defaultRule: string;
  allowRule: string;
  reviewRule: string;
  denyRule: string;
  /** `action-type:<pack>:<type>` */
  catalogRef: string;
  /** The pack default's and the tenant policy's explanations, by effect (reasonsFor). */
  defaults: Record<Decision, string>;
  policy: Record<Decision, string>;
}

interface CompiledManifest {
  types: Map<string, ActionTypeTexts>;
  engineName: string;
  /** Catalog refs by prefix and value (ref()). */
  refs: Record<'rule:' | 'route:' | 'policy:', Map<string, string>>;
}

/**
 * Manifests are fixed once loaded (packs/registry.ts), so their per-action-type texts are made on
 * first use and kept beside them; a manifest that is collected takes its texts with it.
 */
const COMPILED = new WeakMap<GateManifest, CompiledManifest>();

function compiled(m: GateManifest): CompiledManifest {
  let c = COMPILED.get(m);
  if (c === undefined) {
    const types = new Map<string, ActionTypeTexts>();
    for (const spec of m.action_types) {
      const actionType = spec.id;
      if (types.has(actionType)) continue; // find() below took the first
      const title = spec.title;
      types.set(actionType, {
        spec,
        defaultRule: `${m.name}.default.${actionType}`,
        allowRule: `policy.allow.${actionType}`,
        reviewRule: `policy.review.${actionType}`,
        denyRule: `policy.deny.${actionType}`,
        catalogRef: `action-type:${m.name}:${actionType}`,
        defaults: {
          needs_review: `“${title}” needs review until your organisation allowlists this action type.`,
          blocked: `“${title}” is not allowed by this pack.`,
          allow: `“${title}” is allowed by this pack.`,
        },
        policy: {
          allow: `Your organisation allowlisted “${title}”.`,
          needs_review: `Your organisation’s policy requires review of “${title}”.`,
          blocked: `Your organisation’s policy does not allow “${title}”.`,
        },
      });
    }
    c = { types, engineName: `${m.engine.id}@${m.engine.version}`, refs: { 'rule:': new Map(), 'route:': new Map(), 'policy:': new Map() } };
    COMPILED.set(m, c);
  }
  return c;
}

/**
 * `<prefix><value>` for a catalog ref, kept by value for the values a manifest's decisions meet
 * (rule ids, routes and policy digests: bounded by the packs and the tenants' policies; a full
 * table stops keeping, it never grows past its bound).
 */
function ref(c: CompiledManifest, prefix: 'rule:' | 'route:' | 'policy:', value: string): string {
  const table = c.refs[prefix];
  const known = table.get(value);
  if (known !== undefined) return known;
  const made = prefix + value;
  if (table.size < 4096) table.set(value, made);
  return made;
}

export function decide(pack: GatePack, input: GateInput, overlay: PolicyOverlay = EMPTY_OVERLAY): GateDecision {
  const m = pack.manifest;
  const actionType = input.action_type ?? m.default_action_type;
  const c = compiled(m);
  const texts = actionType === null ? undefined : c.types.get(actionType);
  if (actionType === null || texts === undefined) {
    // The route's schema only admits the manifest's action types; reaching this is a bug.
    throw new Error(`pack ${m.name}: unknown action type ${String(actionType)}`);
  }
  const spec = texts.spec;
  const engine = ENGINES[m.engine.id];
  if (engine === undefined) throw new Error(`pack ${m.name}: no engine ${m.engine.id}`);

  const base: Finding = { rule: texts.defaultRule, source: 'pack', effect: spec.default_decision };
  const findings: Finding[] = [base];
  if (base.effect === 'needs_review' && overlay.allow_action_types.includes(actionType)) {
    base.waived = true;
    findings.push({ rule: texts.allowRule, source: 'policy', effect: 'allow' });
  }
  const result = engine(m, actionType, input);
  const hits = result.hits;
  for (const h of hits) findings.push(h.dimension ? { rule: h.rule, source: 'pack', effect: h.effect, dimension: h.dimension } : { rule: h.rule, source: 'pack', effect: h.effect });
  if (overlay.review_action_types.includes(actionType)) findings.push({ rule: texts.reviewRule, source: 'policy', effect: 'needs_review' });
  if (overlay.deny_action_types.includes(actionType)) findings.push({ rule: texts.denyRule, source: 'policy', effect: 'blocked' });

  let decision: Decision = 'allow';
  for (const f of findings) if (!f.waived && RANK[f.effect] > RANK[decision]) decision = f.effect;

  // The rules that decided: their reasons go into next_step, the first one's route (if any) into review_route.
  const deciding = hits.length === 0 ? hits : hits.filter((h) => h.effect === decision);
  let ruleRoute: string | undefined;
  for (const h of deciding) {
    if (h.review_route !== undefined) {
      ruleRoute = h.review_route;
      break;
    }
  }
  const reviewRoute =
    decision === 'needs_review' ? (overlay.review_routes[actionType] ?? ruleRoute ?? spec.review_route ?? m.review_route) : null;
  // In this order, each ref once (its first place).
  const catalogRefs: string[] = [];
  for (const r of m.catalog_refs) addOnce(catalogRefs, r);
  addOnce(catalogRefs, texts.catalogRef);
  for (const f of findings) if (!f.waived) addOnce(catalogRefs, ref(c, 'rule:', f.rule));
  if (reviewRoute) addOnce(catalogRefs, ref(c, 'route:', reviewRoute));
  if (overlay.digest) addOnce(catalogRefs, ref(c, 'policy:', overlay.digest));

  return {
    decision,
    actionType,
    reviewRoute,
    nextStep: nextStep(m.next_step[decision], deciding),
    reasons: reasonsFor(findings, decision, hits, texts),
    catalogRefs,
    manifestDigest: pack.digest,
    policyDigest: overlay.digest,
    context: { engine: c.engineName, pack_version: m.version, action_type: actionType, findings, ...result.facts },
  };
}

/** Appends `value` unless the list holds it already (lists of a few refs: a scan is cheaper than a Set). */
function addOnce(list: string[], value: string): void {
  if (!list.includes(value)) list.push(value);
}

/**
 * The pack's instruction for the decision, then why, from the deciding rules' fixed reasons
 * (interface-spec Gate response: an employee-safe instruction: a short reason naming
 * the dimension). No rule, no reason: a pack default or a tenant policy speaks for itself.
 */
function nextStep(instruction: string, deciding: readonly RuleHit[]): string {
  if (deciding.length === 0) return instruction;
  const why: string[] = [];
  for (const h of deciding) addOnce(why, h.dimension ? `Why (${h.dimension.replaceAll('_', ' ')}): ${h.reason}` : `Why: ${h.reason}`);
  return [instruction, ...why].join(' ');
}

/**
 * The findings that decided, explained: a pack rule by its fixed reason, a pack default or a
 * tenant policy entry by what it means for this action type.
 */
function reasonsFor(findings: readonly Finding[], decision: Decision, hits: readonly RuleHit[], texts: ActionTypeTexts): DecisionReason[] {
  const out: DecisionReason[] = [];
  for (const f of findings) {
    if (f.waived || f.effect !== decision || out.some((r) => r.rule === f.rule)) continue;
    const explanation = f.source === 'policy' ? texts.policy[f.effect] : (reasonOf(hits, f.rule) ?? texts.defaults[f.effect]);
    out.push({ rule: f.rule, explanation });
  }
  return out;
}

/** The reason of the last hit with this rule id, as a Map built from the hits in order would give. */
function reasonOf(hits: readonly RuleHit[], rule: string): string | undefined {
  for (let i = hits.length - 1; i >= 0; i--) if (hits[i]!.rule === rule) return hits[i]!.reason;
  return undefined;
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
