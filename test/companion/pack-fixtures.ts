/**
 * Request bodies for the gate and record tests: for each pack, a context that triggers none of
 * its rules (so an action type's manifest default shows through), and minimal record bodies.
 */
import { createHash } from 'node:crypto';
import type { GatePackName } from '../../companion/packs/manifest.ts';
import type { TestContext } from './helpers.ts';

/** Contexts that match no pack rule: the decision is the action type's default. */
export const QUIET_CONTEXT: Record<GatePackName, Record<string, unknown>> = {
  law: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
  defense: { data_marking: 'public', tool_id: 'onprem-llm', tool_boundary: 'on-premises' },
  medicine: { care_setting: 'outpatient', tool_id: 'ambient-scribe', phi_involved: false, tool_baa_status: 'baa-signed' },
  education: { institution_level: 'k12', tool_id: 'tutor-assist', student_data_class: 'none', tool_data_agreement: 'signed' },
  'us-regulatory': { agency: 'EPA', submission_channel: 'regulations-gov', tool_id: 'comment-drafter' },
};

export function gateBody(pack: GatePackName, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const contextField = pack === 'law' ? 'law_context' : 'context';
  return {
    pack,
    proposed_action: `Draft the next step for matter 42 (${pack})`,
    ...(pack === 'law' ? {} : { action_type: FIRST_ACTION_TYPE[pack] }),
    [contextField]: QUIET_CONTEXT[pack],
    ...overrides,
  };
}

const FIRST_ACTION_TYPE: Record<Exclude<GatePackName, 'law'>, string> = {
  defense: 'cui-handling',
  medicine: 'clinical-note-draft',
  education: 'grade-feedback-draft',
  'us-regulatory': 'public-comment-draft',
};

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function recordBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pack: 'eu-ai-act',
    event_type: 'output_marked',
    occurred_at: '2024-12-31T23:59:00.000Z',
    source_payload: { content_sha256: sha256('an image the model generated') },
    metadata: {
      marking_techniques: ['c2pa-manifest', 'invisible-watermark'],
      marking_payload_ids: ['urn:uuid:3f1c2a9e-8d4b-4a57-9c1e-2b7f6d0a5e11'],
      model: 'image-gen',
      model_version: '2024-11-01',
      detection_check_result: 'detected',
    },
    ...overrides,
  };
}

export async function countSealed(ctx: TestContext): Promise<number> {
  return (await ctx.sql<{ n: number }>('SELECT count(*) AS n FROM sealed_records'))[0]!.n;
}

export async function usageOf(ctx: TestContext, tenantId: string): Promise<{ actions_used: number; credits_used: number }> {
  const [row] = await ctx.sql<{ actions_used: number; credits_used: number }>('SELECT actions_used, credits_used FROM usage_counters WHERE tenant_id = ?', tenantId);
  return row ?? { actions_used: 0, credits_used: 0 };
}
