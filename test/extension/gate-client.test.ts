/**
 * The background gate client against a real companion in process:
 * the request it builds, the three decisions with their seals verified against pinned keys,
 * exactly-once release, idempotent retries, and failing closed (or open, logged) when the
 * companion is unreachable or its answer cannot be trusted.
 */
import { fakeBrowser } from 'wxt/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { payloadCommitment } from '../../shared/attestation.ts';
import { BUILT_IN_ADAPTERS } from '../../extension/utils/adapters/definitions.ts';
import { gateRequestBody, readGateAnswer } from '../../extension/utils/background/gate-client.ts';
import { DEFAULT_GATE_PROFILE } from '../../extension/utils/settings.ts';
import { startBackground, putPolicy } from './background-harness.ts';
import type { Background } from './background-harness.ts';
import { heldAction } from './submit-fixture.ts';

const CONTEXT = { matter_band: 'moderate', doctrine_anchor: 'competence', jurisdiction: 'US', tool_data_handling: 'vendor-trains-on-inputs' };
const ORDINARY = 'Summarise the main arguments for a four-day work week. Contact: ada@example.com';
const CITES = 'Does Smith v. Jones still support our limitation argument?';
const PRIVILEGED = 'Here is our privileged attorney-client memo on the Acme matter.';

let bg: Background;

beforeEach(async () => {
  fakeBrowser.reset();
  bg = await startBackground();
  await bg.configure({ gateProfile: { pack: 'law', actionType: 'proposed-action', context: CONTEXT } });
  await putPolicy(bg, 'law', { allow_action_types: ['proposed-action'] });
});

afterEach(async () => {
  await bg.close();
});

describe('the gate request', () => {
  it('carries pack, action type, context, surface, a stable source key, redacted text and a per-attempt idempotency key', () => {
    const submit = heldAction(ORDINARY, 'attempt-0001');
    const body = gateRequestBody(submit, BUILT_IN_ADAPTERS.chatgpt, DEFAULT_GATE_PROFILE, 'chatgpt.com');
    expect(body).toMatchObject({
      pack: 'law',
      action_type: 'proposed-action',
      law_context: { tool_id: 'chatgpt-web', matter_band: 'moderate' },
      surface: 'chatgpt',
      idempotency_key: 'ag-attempt-0001',
      redacted_text: 'Summarise the main arguments for a four-day work week. Contact: [EMAIL]',
    });
    expect(body.proposed_action).toBe(`Send a prompt to the external AI tool ChatGPT (${ORDINARY.length} characters, SHA-256 ${submit.text_sha256})`);
    expect(body.source_key).toMatch(/^chatgpt:[0-9a-f]{32}$/);
    const again = gateRequestBody(heldAction('other text'), BUILT_IN_ADAPTERS.chatgpt, DEFAULT_GATE_PROFILE, 'chatgpt.com');
    expect(again.source_key).toBe(body.source_key);
    expect(JSON.stringify(body)).not.toContain('ada@example.com');
  });

  it('uses `context` for packs other than law, and the admin\'s tool_id over the adapter\'s', () => {
    const body = gateRequestBody(heldAction('x'), BUILT_IN_ADAPTERS.claude, { pack: 'medicine', actionType: 'patient-message', context: { tool_id: 'claude-enterprise' } }, 'claude.ai');
    expect(body).toMatchObject({ pack: 'medicine', action_type: 'patient-message', context: { tool_id: 'claude-enterprise' } });
    expect(body).not.toHaveProperty('law_context');
  });
});

describe('decisions', () => {
  it('allow: verified, logged, released to this attempt only', async () => {
    const submit = heldAction(ORDINARY);
    const outcome = await bg.send('gate.submit', submit);
    expect(outcome).toMatchObject({ action: 'release', decision: 'allow', verification: { verified: true, key_status: 'sandbox', dev_key: true, key_alarm: false } });
    if (outcome.action !== 'release') throw new Error('unreachable');
    const entry = await bg.svc.log.get(outcome.action_key);
    expect(entry).toMatchObject({ decision: 'allow', site: 'chatgpt', host: '127.0.0.1:41234', verified: true, released_attempt: submit.attempt_id, redactions: { EMAIL: 1 } });

    // A retry of the same attempt (a lost answer) gets the same sealed decision, metered once.
    const retry = await bg.send('gate.submit', submit);
    expect(retry).toMatchObject({ action: 'release', action_key: outcome.action_key });
    const usage = await bg.ctx.request('/tenant/usage', { key: bg.apiKey });
    expect(usage.body.actions_used).toBe(1);
  });

  it('needs_review: held for review with the route and next step', async () => {
    const outcome = await bg.send('gate.submit', heldAction(CITES));
    expect(outcome).toMatchObject({ action: 'review', decision: 'needs_review', review_route: 'browser:legal-review', verification: { verified: true } });
    if (outcome.action === 'review') expect(outcome.next_step).toMatch(/^Pause here\./);
  });

  it('blocked: a verified block with next_step', async () => {
    const outcome = await bg.send('gate.submit', heldAction(PRIVILEGED));
    expect(outcome).toMatchObject({ action: 'block', decision: 'blocked', verification: { verified: true } });
  });

  it('the log never holds the prompt text, redacted or not', async () => {
    await bg.send('gate.submit', heldAction(ORDINARY));
    await bg.send('gate.submit', heldAction(PRIVILEGED));
    const exported = JSON.stringify(await bg.send('log.export', {}, { id: 'test-extension-id', url: 'chrome-extension://test-extension-id/options.html' }));
    for (const fragment of ['four-day', 'Acme', 'ada@example.com', '[EMAIL]']) expect(exported).not.toContain(fragment);
  });
});

describe('failing closed', () => {
  it('companion unreachable: fail closed by default, logged as an incident', async () => {
    bg.intercept = async () => {
      throw new TypeError('Failed to fetch');
    };
    const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
    expect(outcome).toMatchObject({ action: 'fail-closed', reason: 'unreachable' });
    if (outcome.action === 'fail-closed') expect(outcome.message).toContain('Nothing was sent');
    const [incident] = await bg.svc.log.recentIncidents();
    expect(incident).toMatchObject({ kind: 'unreachable', fail_mode: 'closed', released: false });
  });

  it('fail-open only when the admin chose it, and then logged as released', async () => {
    await bg.configure({ failMode: 'open' });
    bg.intercept = async () => {
      throw new TypeError('Failed to fetch');
    };
    const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
    expect(outcome).toMatchObject({ action: 'fail-open', reason: 'unreachable' });
    const [incident] = await bg.svc.log.recentIncidents();
    expect(incident).toMatchObject({ kind: 'unreachable', fail_mode: 'open', released: true });
  });

  it('a database failover shorter than the wait budget is waited out: the action is gated once', async () => {
    const sealed = async () => (await bg.ctx.sql<{ n: number }>('SELECT count(*) AS n FROM sealed_records'))[0]!.n;
    const before = await sealed();
    // The companion's database takes no writes (SQLite's query_only, as a read-only file does) until its first refusal.
    bg.ctx.store.db.pragma('query_only = ON');
    const statuses: number[] = [];
    bg.intercept = async (request, forward) => {
      const res = await forward(request);
      if (new URL(request.url).pathname === '/v1/gate') statuses.push(res.status);
      bg.ctx.store.db.pragma('query_only = OFF');
      return res;
    };
    const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
    expect(outcome.action).toBe('release');
    expect(statuses).toEqual([503, 201]);
    expect(bg.sleeps).toEqual([2000]);
    expect(await sealed()).toBe(before + 1);
    expect(await bg.svc.log.recentIncidents()).toEqual([]);
  });

  it('a longer outage fails closed once the wait budget is spent, saying the gate is unavailable for the moment', async () => {
    bg.ctx.store.db.pragma('query_only = ON');
    try {
      const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
      expect(outcome).toMatchObject({ action: 'fail-closed', reason: 'http-error' });
      if (outcome.action === 'fail-closed') expect(outcome.message).toMatch(/^The gate is unavailable for the moment\. POST \/v1\/gate answered 503 \(database_unavailable\).*your text is still in the composer/);
      // Two waits of Retry-After: 2 s fit the 5 s budget; a third would not.
      expect(bg.sleeps).toEqual([2000, 2000]);
    } finally {
      bg.ctx.store.db.pragma('query_only = OFF');
    }
  });

  it('a refused API key fails closed even in fail-open mode', async () => {
    await bg.configure({ failMode: 'open', apiKey: 'svc_test_notarealkey000000000000000000000000000' });
    const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
    expect(outcome).toMatchObject({ action: 'fail-closed', reason: 'http-error' });
  });

  it('an answer for another request (payload_hash differs) is refused', async () => {
    bg.intercept = async (req, forward) => {
      const body = (await req.clone().json()) as Record<string, unknown>;
      // Replay: the companion is asked about a different (harmless) text.
      return forward(new Request(req, { body: JSON.stringify({ ...body, redacted_text: 'something else entirely' }) }));
    };
    const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
    expect(outcome).toMatchObject({ action: 'fail-closed', reason: 'invalid-answer' });
    if (outcome.action === 'fail-closed') expect(outcome.message).toContain('payload_hash');
  });

  it('an allow whose seal does not verify is not released', async () => {
    bg.intercept = async (req, forward) => {
      const res = await forward(req);
      const body = await res.json();
      body.verify_request.seal.signature = body.verify_request.seal.signature.replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A'));
      return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
    };
    const outcome = await bg.send('gate.submit', heldAction(ORDINARY));
    expect(outcome).toMatchObject({ action: 'fail-closed', reason: 'unverified' });
    if (outcome.action === 'fail-closed') expect(outcome.message).toContain('signature');
  });

  it('readGateAnswer names every problem with an answer', () => {
    const r = readGateAnswer({ decision: 'maybe', action_key: 7, review_route: 3, verify_request: {} }, payloadCommitment({ a: 1 }).hash);
    expect(r.ok).toBe(false);
    if (!r.ok) for (const field of ['decision', 'action_key', 'review_route', 'next_step', 'payload_hash']) expect(r.problem).toContain(field);
  });
});

describe('client_nonce', () => {
  /** The /v1/gate bodies the background sent, as the companion received them. */
  function recordGateBodies(): Record<string, unknown>[] {
    const bodies: Record<string, unknown>[] = [];
    bg.intercept = async (req, forward) => {
      if (new URL(req.url).pathname === '/v1/gate') bodies.push((await req.clone().json()) as Record<string, unknown>);
      return forward(req);
    };
    return bodies;
  }

  it('every gate request carries a fresh 128-bit nonce, committed in the sealed payload_hash and kept in the local log', async () => {
    const bodies = recordGateBodies();
    const outcomes = [];
    for (const text of [ORDINARY, CITES, PRIVILEGED]) outcomes.push(await bg.send('gate.submit', heldAction(text)));
    expect(bodies).toHaveLength(3);
    const nonces = bodies.map((b) => b.client_nonce as string);
    for (const n of nonces) {
      expect(n).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(n, 'base64url')).toHaveLength(16);
    }
    expect(new Set(nonces).size).toBe(3);
    for (const [i, outcome] of outcomes.entries()) {
      if (!('action_key' in outcome)) throw new Error(`no decision: ${JSON.stringify(outcome)}`);
      const entry = await bg.svc.log.get(outcome.action_key);
      // The log keeps the nonce next to the decision, and with the body it re-proves the sealed hash.
      expect(entry?.client_nonce).toBe(nonces[i]);
      const { idempotency_key: _k, ...payload } = bodies[i]!;
      const [row] = await bg.ctx.sql<{ payload_hash: string }>('SELECT payload_hash FROM sealed_records WHERE action_key = ?', outcome.action_key);
      expect(row?.payload_hash).toBe(payloadCommitment(payload).hash);
      const { client_nonce: _n, ...guess } = payload;
      expect(row?.payload_hash).not.toBe(payloadCommitment(guess).hash);
    }
    // The log export (the employee's own file) keeps it too.
    const exported = JSON.stringify(await bg.send('log.export', {}, { id: 'test-extension-id', url: 'chrome-extension://test-extension-id/options.html' }));
    for (const n of nonces) expect(exported).toContain(n);
  });

  it('a retry of the same attempt sends the same nonce: the companion replays the first decision instead of refusing the key', async () => {
    const bodies = recordGateBodies();
    const submit = heldAction(ORDINARY);
    const first = await bg.send('gate.submit', submit);
    const retry = await bg.send('gate.submit', submit);
    expect(retry).toMatchObject({ action: 'release', action_key: (first as { action_key: string }).action_key });
    expect(bodies.map((b) => [b.idempotency_key, b.client_nonce])).toEqual([
      [`ag-${submit.attempt_id}`, submit.client_nonce],
      [`ag-${submit.attempt_id}`, submit.client_nonce],
    ]);
  });

  it('the 503 wait-and-retry resends the same nonce with the same idempotency_key', async () => {
    bg.ctx.store.db.pragma('query_only = ON');
    const sent: Record<string, unknown>[] = [];
    bg.intercept = async (request, forward) => {
      if (new URL(request.url).pathname === '/v1/gate') sent.push((await request.clone().json()) as Record<string, unknown>);
      const res = await forward(request);
      bg.ctx.store.db.pragma('query_only = OFF');
      return res;
    };
    const submit = heldAction(ORDINARY);
    const outcome = await bg.send('gate.submit', submit);
    expect(outcome.action).toBe('release');
    expect(bg.sleeps).toEqual([2000]);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    expect(sent[0]!.client_nonce).toBe(submit.client_nonce);
  });

  it('a held action without a well-formed nonce is refused by the background before anything is sent', async () => {
    const bodies = recordGateBodies();
    const { client_nonce: _n, ...none } = heldAction(ORDINARY);
    for (const bad of [none, { ...heldAction(ORDINARY), client_nonce: 'short' }, { ...heldAction(ORDINARY), client_nonce: 'a'.repeat(21) + '=' }]) {
      await expect(bg.send('gate.submit', bad as never)).rejects.toThrow(/malformed/);
    }
    expect(bodies).toEqual([]);
  });
});
