/**
 * The core law engine (interface-spec "What the service does" 2; companion/gate/law-engine/):
 * rule-based classification of the proposed action, the rules along the five grading-mirror
 * dimensions, precedence blocked > needs_review > allow, the per-dimension summary, determinism,
 * the rules digest the seal commits, and raw safety of the classifier's path.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical-json.ts';
import { decide } from '../../companion/gate/decide.ts';
import { EMPTY_OVERLAY } from '../../companion/policy/policy-overlay.ts';
import type { PolicyOverlay } from '../../companion/policy/policy-overlay.ts';
import type { GateInput } from '../../companion/gate/decide.ts';
import {
  ACTION_CLASS_IDS,
  actionClasses,
  CLASSIFICATION_BOUNDARY,
  classifyText,
  evaluateLaw,
  jurisdictionGroup,
  LAW_DIMENSIONS,
  LAW_ENGINE_VERSION,
  LAW_RULES_DIGEST,
  LAW_RULESET,
  rulesetDigest,
} from '../../companion/gate/law-engine/index.ts';
import type { ActionClassId, LawDimension } from '../../companion/gate/law-engine/index.ts';
import { CLAIM_BOUNDARY } from '../../companion/packs/manifest.ts';
import { getGatePack } from '../../companion/packs/registry.ts';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';
import { gateBody, QUIET_CONTEXT } from './pack-fixtures.ts';

const law = getGatePack('law');
const sha = (v: unknown) => createHash('sha256').update(canonicalBytes(v)).digest('hex');
const BASE = QUIET_CONTEXT.law; // moderate band, competence anchor, US-NY: fires no rule by itself

describe('classification: text → action classes', () => {
  // [text, classes in ACTION_CLASS_IDS order]
  const TABLE: [string, ActionClassId[]][] = [
    // filing
    ['File a motion to dismiss citing Smith v. Jones, 123 F.3d 456 (2d Cir. 1997)', ['filing', 'citing-authority']],
    ['E-file the reply brief via CM/ECF', ['filing']],
    ['FILE THE COMPLAINT WITH THE COURT', ['filing']],
    ['Submit the opposition to the court today', ['filing']],
    ['Lodge the proposed order with the clerk', ['filing']],
    // external-send and client-communication
    ['Email the redline to opposing counsel', ['external-send', 'drafting']],
    ["Upload the client's medical records to ChatGPT", ['external-send', 'confidential-information']],
    ['Post the press release publicly', ['external-send']],
    ['Update the client on the status of the case', ['client-communication']],
    ['Send the signed engagement letter to the client', ['client-communication']],
    // advice and client decisions
    ['Tell the client she should accept the settlement offer', ['client-communication', 'legal-advice', 'client-decision']],
    ['Advise the client on the limitation period', ['client-communication', 'legal-advice']],
    ['Waive the jury trial', ['client-decision']],
    // drafting and research
    ['Draft a confidentiality agreement', ['drafting']],
    ['Research case law on spoliation and summarize the holdings', ['research', 'citing-authority']],
    ['Shepardize the cases in section II', ['research']],
    // content markers
    ['Under 42 U.S.C. § 1983 the claim fails', ['citing-authority']],
    ['Client SSN is 123-45-6789', ['confidential-information']],
    ['Prepare a summary of litigation strategy', ['privileged-material']],
    ['Send the privileged and confidential memo to the expert', ['external-send', 'privileged-material', 'confidential-information']],
    // negatives and near misses
    ['Save the file to the matter folder', []],
    ['Summarize the filing history', []],
    ['Review the non-privileged documents', []],
    ['Open the tin can', []],
    ['Submit the invoice to the court reporter', []],
    ['Serve the privilege log on opposing counsel', ['external-send']], // a privilege log goes to the other side by design
    // The client's files are confidential information (ABA Model Rule 1.6), but no message to the client.
    ['Schedule a call with the client file team', ['confidential-information']],
    // stated limits: negation is not understood, paraphrase is missed
    ['Do not file the motion yet', ['filing']],
    ['Get this in front of the judge by Friday', []],
  ];

  it.each(TABLE)('%s', (text, classes) => {
    expect(classifyText({ proposed_action: text })).toEqual(classes);
  });

  it('reads redacted_text for content markers only: a document that describes a filing is not a filing', () => {
    const redacted = 'PRIVILEGED & CONFIDENTIAL. Plaintiff filed a motion with the court citing Doe v. Roe. [REDACTED]';
    expect(classifyText({ proposed_action: 'Summarize this memo', redacted_text: redacted })).toEqual([
      'citing-authority',
      'privileged-material',
      'confidential-information',
    ]);
    expect(classifyText({ redacted_text: 'Email the brief to opposing counsel and file it with the court' })).toEqual([]);
  });

  it('adds the classes the action type implies, so a typed request meets the same rules as a typed-out one', () => {
    for (const a of law.manifest.action_types) expect(LAW_RULESET.action_type_classes, a.id).toHaveProperty(a.id);
    expect(Object.keys(LAW_RULESET.action_type_classes).sort()).toEqual(law.manifest.action_types.map((a) => a.id).sort());
    expect(actionClasses('court-filing', {})).toEqual(['filing']);
    expect(actionClasses('privileged-material-external-share', { proposed_action: 'Draft it' })).toEqual([
      'external-send',
      'drafting',
      'privileged-material',
    ]);
    expect(actionClasses('proposed-action', {})).toEqual([]);
  });

  it('publishes its limits: English only, keyword-based, no negation, no attachments, a routing aid', () => {
    expect(LAW_RULESET.classification).toMatchObject({ language: 'en', pattern_flags: 'i', claim_boundary: CLASSIFICATION_BOUNDARY });
    expect(CLASSIFICATION_BOUNDARY).toMatch(/keyword-based on English text/);
    expect(CLASSIFICATION_BOUNDARY).toMatch(/paraphrases/);
    expect(CLASSIFICATION_BOUNDARY).toMatch(/negation/);
    expect(CLASSIFICATION_BOUNDARY).toMatch(/attachments/);
    expect(CLASSIFICATION_BOUNDARY).toMatch(/routing aid, not legal advice/);
    expect(law.manifest.claim_boundary).toBe(`${CLAIM_BOUNDARY} It is not legal advice and does not replace a supervising attorney’s judgment. ${CLASSIFICATION_BOUNDARY}`);
    expect(LAW_RULESET.classification.classes.map((c) => c.id)).toEqual([...ACTION_CLASS_IDS]);
  });
});

interface RuleCase {
  rule: string;
  action_type?: string;
  context?: Record<string, unknown>;
  text?: string;
  redacted?: string;
  /** Every rule that fires, in ruleset order; the case's own rule among them. */
  hits: string[];
  decision: 'needs_review' | 'blocked';
}

const input = (c: { action_type?: string; context?: Record<string, unknown>; text?: string; redacted?: string }): GateInput => ({
  action_type: c.action_type,
  context: { ...BASE, ...c.context },
  text: { proposed_action: c.text ?? 'Draft a chronology', redacted_text: c.redacted },
});
const evaluate = (c: Parameters<typeof input>[0]) => {
  const i = input(c);
  return evaluateLaw({ actionType: i.action_type ?? 'proposed-action', context: i.context, text: i.text });
};

describe('rules: one case per rule', () => {
  const TRAINS = { tool_data_handling: 'vendor-trains-on-inputs' };
  const CASES: RuleCase[] = [
    {
      rule: 'law.citation.filing-authority-check',
      text: 'File the motion to dismiss citing Smith v. Jones with the court',
      hits: ['law.citation.filing-authority-check', 'law.filing.attorney-signoff'],
      decision: 'needs_review',
    },
    { rule: 'law.citation.outside-authority-check', text: 'Email the case law summary to opposing counsel', hits: ['law.citation.outside-authority-check'], decision: 'needs_review' },
    { rule: 'law.citation.high-stakes-research', text: 'Research the spoliation standard', context: { matter_band: 'high' }, hits: ['law.citation.high-stakes-research'], decision: 'needs_review' },
    { rule: 'law.privilege.self-learning-tool', text: 'Summarize the privileged interview notes', context: TRAINS, hits: ['law.privilege.self-learning-tool'], decision: 'blocked' },
    { rule: 'law.privilege.anchor-self-learning-tool', context: { ...TRAINS, doctrine_anchor: 'work-product' }, hits: ['law.privilege.anchor-self-learning-tool'], decision: 'blocked' },
    {
      rule: 'law.privilege.unknown-tool-handling',
      text: 'Summarize the attorney-client emails',
      context: { tool_data_handling: 'unknown' },
      hits: ['law.privilege.unknown-tool-handling'],
      decision: 'needs_review',
    },
    { rule: 'law.privilege.outside-waiver-check', text: 'Forward the work product memo to the expert', hits: ['law.privilege.outside-waiver-check'], decision: 'needs_review' },
    {
      rule: 'law.confidentiality.consent-not-documented',
      context: { doctrine_anchor: 'confidentiality', client_consent: 'not-documented' },
      hits: ['law.confidentiality.consent-not-documented'],
      decision: 'needs_review',
    },
    {
      rule: 'law.confidentiality.self-learning-tool-without-consent',
      text: "Summarize the client's medical records",
      context: TRAINS,
      hits: ['law.confidentiality.self-learning-tool-without-consent'],
      decision: 'blocked',
    },
    {
      rule: 'law.confidentiality.cross-border-transfer',
      text: "Send the client's bank account details to the vendor",
      context: { jurisdiction: 'DE-BY' },
      hits: ['law.confidentiality.cross-border-transfer'],
      decision: 'needs_review',
    },
    {
      rule: 'law.confidentiality.high-stakes-outside-send',
      text: "Send the client's bank account details to the vendor",
      context: { matter_band: 'high' },
      hits: ['law.confidentiality.high-stakes-outside-send'],
      decision: 'needs_review',
    },
    { rule: 'law.supervision.critical-matter', context: { matter_band: 'critical' }, hits: ['law.supervision.critical-matter'], decision: 'needs_review' },
    { rule: 'law.supervision.advice-to-client', text: 'Advise the client on the limitation period', hits: ['law.supervision.advice-to-client'], decision: 'needs_review' },
    {
      rule: 'law.supervision.nonlawyer-client-advice',
      action_type: 'client-communication',
      context: { doctrine_anchor: 'unauthorized-practice' },
      hits: ['law.supervision.nonlawyer-client-advice'],
      decision: 'blocked',
    },
    { rule: 'law.supervision.client-decision', text: 'Accept the settlement offer', hits: ['law.supervision.client-decision'], decision: 'needs_review' },
    { rule: 'law.filing.attorney-signoff', action_type: 'court-filing', hits: ['law.filing.attorney-signoff'], decision: 'needs_review' },
    {
      rule: 'law.filing.redaction-check',
      text: "File the exhibit listing the plaintiff's date of birth with the court",
      hits: ['law.filing.attorney-signoff', 'law.filing.redaction-check'],
      decision: 'needs_review',
    },
    {
      rule: 'law.filing.privileged-content',
      text: 'File the work product memo with the court',
      hits: ['law.filing.attorney-signoff', 'law.filing.privileged-content'],
      decision: 'needs_review',
    },
    {
      rule: 'law.filing.unauthorized-practice',
      action_type: 'court-filing',
      context: { doctrine_anchor: 'unauthorized-practice' },
      hits: ['law.filing.attorney-signoff', 'law.filing.unauthorized-practice'],
      decision: 'blocked',
    },
  ];

  it('has a case for every rule, and no case for a rule that does not exist', () => {
    expect(CASES.map((c) => c.rule).sort()).toEqual(LAW_RULESET.rules.map((r) => r.id).sort());
  });

  it.each(CASES)('$rule', (c) => {
    const e = evaluate(c);
    expect(e.hits.map((h) => h.rule)).toEqual(c.hits);
    const rule = LAW_RULESET.rules.find((r) => r.id === c.rule)!;
    expect(e.hits.find((h) => h.rule === c.rule)).toEqual({
      rule: rule.id,
      dimension: rule.dimension,
      effect: rule.effect,
      reason: rule.reason,
      ...(rule.review_route ? { review_route: rule.review_route } : {}),
    });
    // Through the gate decision: the rule is a committed finding with its dimension, and (an
    // allow list waiving the default) the decision is the rule's, with its reason in next_step.
    const allowAll: PolicyOverlay = { ...EMPTY_OVERLAY, allow_action_types: law.manifest.action_types.map((a) => a.id) };
    const d = decide(law, input(c), allowAll);
    expect(d.decision).toBe(c.decision);
    expect(d.context.findings).toContainEqual({ rule: c.rule, source: 'pack', effect: rule.effect, dimension: rule.dimension });
    expect(d.catalogRefs).toContain(`rule:${c.rule}`);
    if (rule.effect === c.decision) expect(d.nextStep).toContain(`Why (${rule.dimension.replaceAll('_', ' ')}): ${rule.reason}`);
  });

  it('fires nothing on a quiet context and a plain drafting step, for every action type that implies no risky class', () => {
    for (const type of ['proposed-action', 'client-communication', 'legal-research-memo', 'contract-redline', 'discovery-production']) {
      expect(evaluate({ action_type: type }).hits, type).toEqual([]);
    }
  });

  it('honours unless: documented client consent lifts the self-learning-tool block on confidential information', () => {
    const c = { text: "Summarize the client's medical records", context: { ...TRAINS, client_consent: 'documented' } };
    expect(evaluate(c).hits).toEqual([]);
    expect(evaluate({ ...c, context: { ...TRAINS, client_consent: 'not-applicable' } }).hits.map((h) => h.rule)).toEqual([
      'law.confidentiality.self-learning-tool-without-consent',
    ]);
  });

  it('groups jurisdictions by country: EEA, UK, US, other', () => {
    expect(['DE-BY', 'NO', 'GB-ENG', 'US-CA', 'CH', 'JP'].map(jurisdictionGroup)).toEqual(['eea', 'eea', 'uk', 'us', 'other', 'other']);
    const send = { text: "Send the client's bank account details to the vendor" };
    expect(evaluate({ ...send, context: { jurisdiction: 'GB' } }).hits.map((h) => h.rule)).toEqual(['law.confidentiality.cross-border-transfer']);
    expect(evaluate({ ...send, context: { jurisdiction: 'CH' } }).hits).toEqual([]);
  });

  it('names only context values the law manifest admits', () => {
    const keys = law.manifest.context_keys;
    for (const rule of LAW_RULESET.rules) {
      for (const [k, values] of [...Object.entries(rule.when.context ?? {}), ...Object.entries(rule.unless?.context ?? {})]) {
        if (k === 'jurisdiction_group') {
          for (const v of values) expect([...Object.keys(LAW_RULESET.jurisdiction_groups), 'other']).toContain(v);
          continue;
        }
        const spec = keys[k];
        expect(spec, `${rule.id}: ${k}`).toBeDefined();
        if (spec!.value.type === 'enum') for (const v of values) expect(spec!.value.values, `${rule.id}: ${k}`).toContain(v);
      }
    }
  });
});

describe('conflicts resolve by precedence: blocked > needs_review > allow', () => {
  it('within one dimension: a self-learning tool blocks privileged material that would otherwise only need a waiver check', () => {
    const i = input({ text: 'Forward the privileged memo to opposing counsel', context: { tool_data_handling: 'vendor-trains-on-inputs' } });
    const d = decide(law, i);
    expect(d.decision).toBe('blocked');
    expect(d.reviewRoute).toBeNull();
    expect(d.context.findings.filter((f) => f.source === 'pack' && f.dimension)).toEqual([
      { rule: 'law.privilege.self-learning-tool', source: 'pack', effect: 'blocked', dimension: 'privilege_boundary' },
      { rule: 'law.privilege.outside-waiver-check', source: 'pack', effect: 'needs_review', dimension: 'privilege_boundary' },
    ]);
    expect(d.context.dimensions).toMatchObject({ privilege_boundary: 'blocked' });
    // Only the deciding rule explains the decision.
    expect(d.nextStep).toBe(`${law.manifest.next_step.blocked} Why (privilege boundary): Privileged material does not go to a tool that learns from its inputs.`);
  });

  it('across dimensions: an unauthorized-practice block beats the attorney sign-off a filing needs', () => {
    const d = decide(law, input({ action_type: 'court-filing', context: { doctrine_anchor: 'unauthorized-practice' } }));
    expect(d.decision).toBe('blocked');
    expect(d.context.dimensions).toEqual({
      citation_support: 'allow',
      privilege_boundary: 'allow',
      supervision_route: 'allow',
      client_confidentiality: 'allow',
      filing_readiness: 'blocked',
    });
  });

  it('a pack default of blocked stands even when only needs_review rules fire, and a tenant deny beats every rule', () => {
    const share = decide(law, input({ action_type: 'privileged-material-external-share' }));
    expect(share.decision).toBe('blocked');
    expect(share.context.findings.map((f) => f.rule)).toEqual(['law.default.privileged-material-external-share', 'law.privilege.outside-waiver-check']);
    expect(share.nextStep).toBe(law.manifest.next_step.blocked);

    const deny: PolicyOverlay = { ...EMPTY_OVERLAY, deny_action_types: ['proposed-action'] };
    expect(decide(law, input({ text: 'File the motion with the court' }), deny).decision).toBe('blocked');
  });

  it('an allow list waives the pack default but no engine rule; with no rule firing the tenant gets allow', () => {
    const allow: PolicyOverlay = { ...EMPTY_OVERLAY, digest: 'b'.repeat(64), allow_action_types: ['proposed-action'] };
    expect(decide(law, input({ text: 'Draft a chronology of the deposition' }), allow).decision).toBe('allow');
    const filing = decide(law, input({ text: 'E-file the reply brief' }), allow);
    expect(filing.decision).toBe('needs_review');
    expect(filing.context.findings).toEqual([
      { rule: 'law.default.proposed-action', source: 'pack', effect: 'needs_review', waived: true },
      { rule: 'policy.allow.proposed-action', source: 'policy', effect: 'allow' },
      { rule: 'law.filing.attorney-signoff', source: 'pack', effect: 'needs_review', dimension: 'filing_readiness' },
    ]);
  });

  it('routes a rule-decided review to the rule’s route, unless the tenant routes the action type', () => {
    const i = input({ text: 'E-file the reply brief' });
    expect(decide(law, i).reviewRoute).toBe('browser:supervising-attorney');
    expect(decide(law, input({ text: 'Accept the settlement offer' })).reviewRoute).toBe(law.manifest.review_route);
    const routed: PolicyOverlay = { ...EMPTY_OVERLAY, review_routes: { 'proposed-action': 'chat:litigation-desk' } };
    expect(decide(law, i, routed).reviewRoute).toBe('chat:litigation-desk');
  });
});

describe('per-dimension summary', () => {
  it('gives each of the five dimensions the highest effect among its rules, allow where none fired', () => {
    const e = evaluate({
      text: "File the exhibit with the plaintiff's date of birth and cite Smith v. Jones with the court; then accept the settlement offer",
      context: { matter_band: 'critical' },
    });
    expect(Object.keys(e.dimensions)).toEqual([...LAW_DIMENSIONS]);
    expect(e.dimensions).toEqual({
      citation_support: 'needs_review',
      privilege_boundary: 'allow',
      supervision_route: 'needs_review',
      client_confidentiality: 'allow',
      filing_readiness: 'needs_review',
    } satisfies Record<LawDimension, string>);
    expect(e.hits.map((h) => h.rule)).toEqual([
      'law.citation.filing-authority-check',
      'law.supervision.critical-matter',
      'law.supervision.client-decision',
      'law.filing.attorney-signoff',
      'law.filing.redaction-check',
    ]);
  });

  it('is committed in the decision context with the class ids, engine version and rules digest', () => {
    const d = decide(law, input({ text: 'E-file the reply brief' }));
    expect(d.context).toMatchObject({
      engine: `law-core@${LAW_ENGINE_VERSION}`,
      engine_version: LAW_ENGINE_VERSION,
      rules_digest: LAW_RULES_DIGEST,
      action_classes: ['filing'],
      dimensions: { filing_readiness: 'needs_review', citation_support: 'allow' },
    });
  });
});

describe('determinism', () => {
  it('gives equal decisions for equal inputs, whatever the order of context keys, and keeps no state between calls', () => {
    const text = 'Forward the privileged memo citing 42 U.S.C. § 1983 to opposing counsel';
    const a = decide(law, input({ text, context: { matter_band: 'high', tool_data_handling: 'unknown' } }));
    const reversed = Object.fromEntries(Object.entries({ ...BASE, matter_band: 'high', tool_data_handling: 'unknown' }).reverse());
    const b = decide(law, { action_type: undefined, context: reversed, text: { proposed_action: text } });
    for (let i = 0; i < 3; i++) classifyText({ proposed_action: 'E-file the reply brief' }); // a stateful regex would drift here
    const c = decide(law, input({ text, context: { matter_band: 'high', tool_data_handling: 'unknown' } }));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(canonicalBytes(c.context)).toEqual(canonicalBytes(a.context));
  });
});

describe('rules digest', () => {
  it('is SHA-256 of the JCS bytes of the ruleset, and the law manifest commits it', () => {
    expect(LAW_RULES_DIGEST).toBe(sha(LAW_RULESET));
    expect(law.manifest.engine).toEqual({ id: 'law-core', version: LAW_ENGINE_VERSION, rules_digest: LAW_RULES_DIGEST });
  });

  it('changes when any rule, class pattern or grouping changes', () => {
    const clone = () => structuredClone(LAW_RULESET) as any;
    const reason = clone();
    reason.rules[0].reason += ' ';
    const effect = clone();
    effect.rules.find((r: any) => r.id === 'law.supervision.client-decision').effect = 'blocked';
    const pattern = clone();
    pattern.classification.classes[0].patterns.push('\\bsubmit\\b');
    const group = clone();
    group.jurisdiction_groups.uk.push('IE');
    const digests = [reason, effect, pattern, group].map(rulesetDigest);
    expect(new Set([LAW_RULES_DIGEST, ...digests]).size).toBe(5);
    expect(rulesetDigest(clone())).toBe(LAW_RULES_DIGEST);
  });
});

describe('through the real gate', () => {
  let ctx: TestContext;
  let key: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    ({ apiKey: key } = await ctx.signup());
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('seals the engine version, rules digest, class ids, findings and dimensions; GET /v1/packs publishes the ruleset behind the digest', async () => {
    const res = await ctx.request('/v1/gate', { json: gateBody('law', { proposed_action: 'E-file the reply brief citing Smith v. Jones' }), key });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ decision: 'needs_review', review_route: 'browser:supervising-attorney' });
    expect(res.body.next_step).toBe(
      `${law.manifest.next_step.needs_review} Why (citation support): Every authority cited in a filing is checked against its source before filing. ` +
        'Why (filing readiness): A filing is signed off by the attorney of record before it reaches the tribunal.',
    );
    expect(res.body.catalog_refs).toEqual(expect.arrayContaining(['rule:law.citation.filing-authority-check', 'rule:law.filing.attorney-signoff']));
    const att = res.body.evidence_packet.seal.attestation;
    expect(att.manifest_digest).toBe(law.digest);
    expect(att.context).toMatchObject({
      engine_version: LAW_ENGINE_VERSION,
      rules_digest: LAW_RULES_DIGEST,
      action_classes: ['filing', 'citing-authority'],
      dimensions: { citation_support: 'needs_review', filing_readiness: 'needs_review', privilege_boundary: 'allow' },
    });
    expect((await ctx.request('/v1/verify', { json: res.body.verify_request })).body.verified).toBe(true);

    const packs = (await ctx.request('/v1/packs')).body;
    const engine = packs.engines['law-core'];
    expect(engine).toMatchObject({ version: LAW_ENGINE_VERSION, rules_digest: att.context.rules_digest });
    expect(sha(engine.ruleset)).toBe(att.context.rules_digest);
    expect(engine.ruleset.classification.classes.map((c: any) => c.id)).toEqual([...ACTION_CLASS_IDS]);
    expect(engine.ruleset.classification.claim_boundary).toBe(CLASSIFICATION_BOUNDARY);
    expect(packs.packs.find((p: any) => p.name === 'law').engine.rules_digest).toBe(LAW_RULES_DIGEST);
  });

  it('reads the texts in memory only: nothing of them reaches the answer, the database or the log', async () => {
    const proposed =
      'ZEBRA-7731 E-file the Hollis motion citing Quokkason v. Marmot, 123 F.3d 456, and email the privileged memo with SSN 987-65-4321 to opposing counsel; advise the client to accept the settlement offer';
    const redacted = 'PANGOLIN-0042 attorney-client [REDACTED] work product';
    const body = gateBody('law', {
      proposed_action: proposed,
      redacted_text: redacted,
      law_context: { ...BASE, matter_band: 'high', tool_data_handling: 'vendor-trains-on-inputs' },
    });
    const res = await ctx.request('/v1/gate', { json: body, key });
    expect(res.status, res.text).toBe(201);
    expect(res.body.decision).toBe('blocked');
    const att = res.body.evidence_packet.seal.attestation;
    expect(att.context.action_classes).toEqual([
      'filing',
      'external-send',
      'client-communication',
      'legal-advice',
      'client-decision',
      'citing-authority',
      'privileged-material',
      'confidential-information',
    ]);
    // The committed context is ids only: known class ids, known rule ids, the five dimensions.
    const ruleIds = new Set([...LAW_RULESET.rules.map((r) => r.id), 'law.default.proposed-action']);
    for (const f of att.context.findings) expect(ruleIds.has(f.rule), f.rule).toBe(true);
    for (const c of att.context.action_classes) expect(ACTION_CLASS_IDS).toContain(c);
    // Member order is the stored JCS order (RFC 8785 §3.2.3), not the engine's.
    expect(Object.keys(att.context.dimensions).sort()).toEqual([...LAW_DIMENSIONS].sort());

    const needles = ['ZEBRA-7731', 'Hollis', 'Quokkason', 'Marmot', '123 F.3d', '987-65-4321', 'PANGOLIN-0042', 'opposing counsel', 'settlement offer'];
    const answer = res.text;
    for (const n of needles) expect(answer, n).not.toContain(n);
    for (const { name: file, bytes } of await ctx.storedBytes()) {
      for (const n of needles) expect(bytes.includes(Buffer.from(n)), `${n} in ${file}`).toBe(false);
    }
    const logged = JSON.stringify(ctx.log.entries);
    for (const n of needles) expect(logged).not.toContain(n);
  });
});
