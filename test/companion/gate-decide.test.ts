/**
 * The pure decision (companion/gate/decide.ts): manifest defaults, pack rules, the tenant
 * overlay seam and the precedence blocked > needs_review > allow (interface-spec States and
 * transitions: needs_review is the usual outcome for a fresh sandbox until the tenant
 * allowlists the action type; a pack or policy deny blocks).
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../companion/gate/decide.ts';
import { EMPTY_OVERLAY } from '../../companion/policy/policy-overlay.ts';
import type { PolicyOverlay } from '../../companion/policy/policy-overlay.ts';
import { gatePacks, getGatePack } from '../../companion/packs/registry.ts';
import { QUIET_CONTEXT } from './pack-fixtures.ts';

const overlay = (o: Partial<PolicyOverlay>): PolicyOverlay => ({ ...EMPTY_OVERLAY, ...o });

describe('decide', () => {
  it('gives each action type its manifest default under a context that triggers no rule', () => {
    for (const pack of gatePacks()) {
      const m = pack.manifest;
      for (const a of m.action_types) {
        const d = decide(pack, { action_type: a.id, context: QUIET_CONTEXT[m.name] });
        const ruled = m.rules.some((r) => r.when.action_types?.includes(a.id) && Object.keys(r.when.context).length === 0);
        expect(d.decision, `${m.name} ${a.id}`).toBe(ruled ? 'needs_review' : a.default_decision);
        expect(d.actionType).toBe(a.id);
        expect(d.manifestDigest).toBe(pack.digest);
        expect(d.policyDigest).toBeNull();
        // A rule that fires appends its reason (law: court-filing always needs the attorney's sign-off).
        expect(d.nextStep.startsWith(m.next_step[d.decision])).toBe(true);
        expect(d.reviewRoute).toBe(d.decision === 'needs_review' ? (a.review_route ?? m.review_route) : null);
        expect(d.catalogRefs).toEqual(expect.arrayContaining([`pack:${m.name}`, `action-type:${m.name}:${a.id}`, `rule:${m.name}.default.${a.id}`]));
        expect(d.context).toMatchObject({ engine: `${m.engine.id}@${m.engine.version}`, pack_version: m.version, action_type: a.id });
      }
    }
  });

  it('uses the law default action type when none is given', () => {
    const d = decide(getGatePack('law'), { context: QUIET_CONTEXT.law });
    expect(d.actionType).toBe('proposed-action');
    expect(d.decision).toBe('needs_review');
    expect(d.reviewRoute).toBe('browser:legal-review');
  });

  it('blocks on pack rules: PHI to a tool without a BAA, CUI to an external AI service, education records without an agreement', () => {
    const medicine = decide(getGatePack('medicine'), {
      action_type: 'phi-export',
      context: { ...QUIET_CONTEXT.medicine, phi_involved: true, tool_baa_status: 'no-baa' },
    });
    expect(medicine.decision).toBe('blocked');
    expect(medicine.reviewRoute).toBeNull();
    expect(medicine.catalogRefs).toContain('rule:medicine.hipaa.phi-to-tool-without-baa');
    expect(medicine.nextStep).toMatch(/^Stop\./);

    const defense = decide(getGatePack('defense'), {
      action_type: 'cui-handling',
      context: { ...QUIET_CONTEXT.defense, data_marking: 'cui', tool_boundary: 'external-ai-service' },
    });
    expect(defense.decision).toBe('blocked');
    expect(defense.context.findings).toContainEqual({ rule: 'defense.cui.external-boundary', source: 'pack', effect: 'blocked' });

    const education = decide(getGatePack('education'), {
      action_type: 'grade-feedback-draft',
      context: { ...QUIET_CONTEXT.education, student_data_class: 'education-record', tool_data_agreement: 'unknown' },
    });
    expect(education.decision).toBe('blocked');
  });

  it('lets a tenant allow list waive a needs_review default, but never a pack block or a non-waivable rule', () => {
    const law = getGatePack('law');
    const allowAll = overlay({ digest: 'a'.repeat(64), allow_action_types: law.manifest.action_types.map((a) => a.id) });

    const allowed = decide(law, { action_type: 'client-communication', context: QUIET_CONTEXT.law }, allowAll);
    expect(allowed.decision).toBe('allow');
    expect(allowed.reviewRoute).toBeNull();
    expect(allowed.policyDigest).toBe('a'.repeat(64));
    expect(allowed.catalogRefs).toContain(`policy:${'a'.repeat(64)}`);
    expect(allowed.context.findings).toEqual([
      { rule: 'law.default.client-communication', source: 'pack', effect: 'needs_review', waived: true },
      { rule: 'policy.allow.client-communication', source: 'policy', effect: 'allow' },
    ]);

    expect(decide(law, { action_type: 'privileged-material-external-share', context: QUIET_CONTEXT.law }, allowAll).decision).toBe('blocked');
    expect(decide(law, { action_type: 'court-filing', context: QUIET_CONTEXT.law }, allowAll).decision).toBe('needs_review');
    const critical = { ...QUIET_CONTEXT.law, matter_band: 'critical' };
    expect(decide(law, { action_type: 'client-communication', context: critical }, allowAll).decision).toBe('needs_review');
  });

  it('applies tenant denies and required reviews with blocked > needs_review > allow', () => {
    const medicine = getGatePack('medicine');
    const input = { action_type: 'patient-message', context: QUIET_CONTEXT.medicine };
    const both = overlay({ allow_action_types: ['patient-message'], review_action_types: ['patient-message'], deny_action_types: ['patient-message'] });
    expect(decide(medicine, input, both).decision).toBe('blocked');
    const review = overlay({ allow_action_types: ['patient-message'], review_action_types: ['patient-message'], review_routes: { 'patient-message': 'chat:nurse-line' } });
    const d = decide(medicine, input, review);
    expect(d.decision).toBe('needs_review');
    expect(d.reviewRoute).toBe('chat:nurse-line');
  });

  it('is deterministic and does not depend on key order of the context', () => {
    const pack = getGatePack('defense');
    const a = decide(pack, { action_type: 'proposal-draft', context: { data_marking: 'fci', tool_id: 'x', tool_boundary: 'external-ai-service' } });
    const b = decide(pack, { action_type: 'proposal-draft', context: { tool_boundary: 'external-ai-service', tool_id: 'x', data_marking: 'fci' } });
    expect(a).toEqual(b);
    expect(a.decision).toBe('needs_review');
    expect(a.catalogRefs).toContain('rule:defense.fci.external-service-review');
  });

  it('explains the decision with the deciding findings only: their sealed rule ids and fixed, request-free texts', () => {
    const law = getGatePack('law');
    const title = law.manifest.action_types.find((a) => a.id === 'proposed-action')!.title;
    const fresh = decide(law, { context: QUIET_CONTEXT.law });
    expect(fresh.reasons).toEqual([{ rule: 'law.default.proposed-action', explanation: `“${title}” needs review until your organisation allowlists this action type.` }]);

    const allowed = decide(law, { context: QUIET_CONTEXT.law }, overlay({ allow_action_types: ['proposed-action'] }));
    expect(allowed.reasons).toEqual([{ rule: 'policy.allow.proposed-action', explanation: `Your organisation allowlisted “${title}”.` }]);

    const medicine = getGatePack('medicine');
    const phi = decide(medicine, { action_type: 'phi-export', context: { ...QUIET_CONTEXT.medicine, phi_involved: true, tool_baa_status: 'no-baa' } });
    const rule = medicine.manifest.rules.find((r) => r.id === 'medicine.hipaa.phi-to-tool-without-baa')!;
    expect(phi.reasons).toContainEqual({ rule: rule.id, explanation: rule.reason });
    expect(phi.reasons.every((r) => phi.context.findings.some((f) => f.rule === r.rule && f.effect === 'blocked'))).toBe(true);

    const denied = decide(medicine, { action_type: 'patient-message', context: QUIET_CONTEXT.medicine }, overlay({ deny_action_types: ['patient-message'] }));
    expect(denied.reasons.map((r) => r.rule)).toEqual(['policy.deny.patient-message']);
  });

  it('refuses an action type the manifest does not know (the schema never lets one through)', () => {
    expect(() => decide(getGatePack('law'), { action_type: 'nope', context: QUIET_CONTEXT.law })).toThrow(/unknown action type/);
  });
});
