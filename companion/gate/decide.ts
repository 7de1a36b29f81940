/**
 * The gate decision (interface-spec "What the service does" 1–3, States and transitions):
 * a pack's manifest and the tenant's policy overlay turn a validated request into allow,
 * needs_review or blocked, plus the review route, next step and catalog refs the response
 * carries and the facts the seal commits.
 *
 * Pure and deterministic: no I/O, no clock, no randomness. The same pack, request and overlay
 * always give the same decision, so a seal's manifest_digest and policy_digest are enough to
 * re-derive why it was made.
 *
 * Precedence is blocked > needs_review > allow. A pack's default for an action type is the one
 * finding a tenant may waive (by allowlisting the action type: "the usual outcome for a fresh
 * sandbox, until the tenant allowlists the action type"); pack rules and tenant denies only
 * ever raise the decision.
 */
import type { Decision, GateManifest } from '../packs/manifest.ts';
import type { GatePack } from '../packs/registry.ts';

/**
 * The tenant-policy seam (interface-spec "What the service does" 3). The tenant policy
 * capability builds one from the tenant's current policy receipt; until it exists every tenant
 * gets EMPTY_OVERLAY. Only action type ids and routes live here, never raw content.
 */
export interface PolicyOverlay {
  /** Digest of the policy receipt this overlay came from; null when the tenant has no policy. */
  readonly digest: string | null;
  /** Action types whose pack default of needs_review the tenant waives. */
  readonly allow_action_types: readonly string[];
  /** Hard denies: blocked whatever the pack says. */
  readonly deny_action_types: readonly string[];
  /** Required review: needs_review even when the pack or an allow entry would allow. */
  readonly review_action_types: readonly string[];
  /** Review route per action type, overriding the pack's. */
  readonly review_routes: Readonly<Record<string, string>>;
}

export const EMPTY_OVERLAY: PolicyOverlay = Object.freeze({
  digest: null,
  allow_action_types: Object.freeze([]),
  deny_action_types: Object.freeze([]),
  review_action_types: Object.freeze([]),
  review_routes: Object.freeze({}),
});

/** What the decision reads from a validated gate request; never the proposed text. */
export interface GateInput {
  action_type?: string | undefined;
  context: Readonly<Record<string, unknown>>;
}

/**
 * The decision's view of a validated gate body, built in one place so the gate and the policy
 * preview decide on exactly the same input.
 */
export function gateInput(pack: GatePack, body: Readonly<Record<string, unknown>>): GateInput {
  const actionType = body.action_type;
  return {
    action_type: typeof actionType === 'string' ? actionType : undefined,
    context: (body[pack.manifest.context_field] ?? {}) as Readonly<Record<string, unknown>>,
  };
}

/** One reason the decision is what it is; ids are committed in the seal and listed as catalog refs. */
export interface Finding {
  rule: string;
  source: 'pack' | 'policy';
  effect: Decision;
  /** Set on a pack default the tenant's allow list waived; it no longer counts. */
  waived?: true;
}

export interface GateDecision {
  decision: Decision;
  actionType: string;
  /** `<channel>:<target>` when the decision is needs_review, else null (interface-spec Gate response). */
  reviewRoute: string | null;
  nextStep: string;
  catalogRefs: string[];
  manifestDigest: string;
  policyDigest: string | null;
  /** Committed in the seal's attestation: raw-safe facts only (ids, versions, effects). */
  context: {
    engine: string;
    pack_version: string;
    action_type: string;
    findings: Finding[];
  };
}

/** Evaluates a pack's own rules. */
export type PackEngine = (manifest: GateManifest, actionType: string, input: GateInput) => Finding[];

/**
 * Engines by manifest `engine.id`. law-core is the seam for the core law engine
 * (interface-spec "What the service does" 2); today it evaluates the law manifest's rules like
 * any other pack, and a deeper engine registers here without changing the routes or the seal.
 */
const ENGINES: Readonly<Record<string, PackEngine>> = {
  'law-core': manifestRules,
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
  findings.push(...engine(m, actionType, input));
  if (overlay.review_action_types.includes(actionType)) findings.push({ rule: `policy.review.${actionType}`, source: 'policy', effect: 'needs_review' });
  if (overlay.deny_action_types.includes(actionType)) findings.push({ rule: `policy.deny.${actionType}`, source: 'policy', effect: 'blocked' });

  let decision: Decision = 'allow';
  for (const f of findings) if (!f.waived && RANK[f.effect] > RANK[decision]) decision = f.effect;

  const reviewRoute = decision === 'needs_review' ? (overlay.review_routes[actionType] ?? spec.review_route ?? m.review_route) : null;
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
    nextStep: m.next_step[decision],
    catalogRefs,
    manifestDigest: pack.digest,
    policyDigest: overlay.digest,
    context: { engine: `${m.engine.id}@${m.engine.version}`, pack_version: m.version, action_type: actionType, findings },
  };
}

/** A rule matches when its action types (if any) include this one and every context condition holds. */
function manifestRules(manifest: GateManifest, actionType: string, input: GateInput): Finding[] {
  const out: Finding[] = [];
  for (const rule of manifest.rules) {
    if (rule.when.action_types && !rule.when.action_types.includes(actionType)) continue;
    const holds = Object.entries(rule.when.context).every(([k, allowed]) => {
      const v = input.context[k];
      return (typeof v === 'string' || typeof v === 'boolean') && allowed.includes(v);
    });
    if (holds) out.push({ rule: rule.id, source: 'pack', effect: rule.effect });
  }
  return out;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
