/**
 * Idempotency retention (companion/evidence/idempotency/): a replay is the first answer, byte for byte,
 * though only its compact form is kept (the evidence is rebuilt from the sealed record); keys
 * expire after the window (SVC_IDEMPOTENCY_TTL_SECONDS) and are then forgotten and purged.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestContext } from './helpers.ts';
import type { TestContext } from './helpers.ts';

const TTL_SECONDS = 3600;
let ctx: TestContext;
let key: string;
beforeEach(async () => {
  ctx = await createTestContext({ env: { SVC_IDEMPOTENCY_TTL_SECONDS: String(TTL_SECONDS) } });
  ({ apiKey: key } = await ctx.signup());
});
afterEach(async () => {
  await ctx.close();
});

const gate = (idempotencyKey: string) =>
  ctx.request('/v1/gate', {
    key,
    json: {
      pack: 'law',
      proposed_action: 'Draft a reply to opposing counsel about the discovery schedule',
      law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
      idempotency_key: idempotencyKey,
    },
  });

const rows = () => ctx.sql<{ response: string; created_at: string }>('SELECT response, created_at FROM idempotency_keys');
const sealed = async () => (await ctx.sql<{ n: number }>('SELECT count(*) AS n FROM sealed_records'))[0]!.n;

describe('idempotency retention', () => {
  it('replays the first answer byte for byte from a compact row without the seal', async () => {
    const first = await gate('k-compact');
    expect(first.status).toBe(201);
    const [row] = await rows();
    expect(row!.response).not.toContain(first.body.evidence_packet.seal.signature);
    expect(row!.response.length).toBeLessThan(first.text.length / 2);
    const again = await gate('k-compact');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    const record = await ctx.request(`/v1/records/${first.body.action_key}`, { key });
    expect(record.body.evidence_packet).toEqual(first.body.evidence_packet);
  });

  it('forgets a key after the window: the same key then seals anew, and the expiry worker purges expired rows', async () => {
    const first = await gate('k-window');
    ctx.clock.advance((TTL_SECONDS - 1) * 1000);
    expect((await gate('k-window')).text).toBe(first.text);
    const count = await sealed();
    ctx.clock.advance(2000);
    const later = await gate('k-window');
    expect(later.status).toBe(201);
    expect(later.body.action_key).not.toBe(first.body.action_key);
    expect(await sealed()).toBe(count + 1);
    expect(await rows()).toHaveLength(1);

    await gate('k-other');
    ctx.clock.advance((TTL_SECONDS + 1) * 1000);
    await gate('k-fresh');
    // A seal deletes nothing: the expired keys wait for the expiry worker's round.
    expect(await rows()).toHaveLength(3);
    await ctx.deps.workers.idempotencyExpiry.tick();
    expect((await rows()).map((r) => r.created_at)).toEqual([ctx.clock.now().toISOString()]);
  });
});
