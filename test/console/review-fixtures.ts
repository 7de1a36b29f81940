/**
 * What the console's review tests set up through the API: people, an employee's paused law
 * action, and the review context the employee's extension would seal to the reviewers' devices
 * (shared/hpke.ts, RFC 9180, as extension/utils/background/review-context.ts does).
 */
import { expect } from 'vitest';
import { fromBase64Url, toBase64Url } from '../../shared/encoding.ts';
import { encodeReviewContext, REVIEW_CONTEXT_FORMAT, sealReviewContext } from '../../shared/hpke.ts';
import { gateBody } from '../companion/pack-fixtures.ts';
import type { ConsoleWorld } from './harness.ts';

/** Adds a person to the world's tenant and returns their API key. */
export async function addPerson(world: ConsoleWorld, email: string, capabilities: string[]): Promise<string> {
  const res = await world.ctx.request('/account/people', { json: { email, display_name: email.split('@')[0], capabilities }, key: world.apiKey });
  expect(res.status, res.text).toBe(201);
  return res.body.api_key as string;
}

export interface Paused {
  actionKey: string;
  payloadHash: string;
  body: Record<string, unknown>;
}

/** A law action the employee's key submits and the gate pauses for review. */
export async function pause(world: ConsoleWorld, employeeKey: string, prompt: string): Promise<Paused> {
  const body = gateBody('law', { redacted_text: prompt });
  const res = await world.ctx.request('/v1/gate', { json: body, key: employeeKey });
  expect(res.status, res.text).toBe(201);
  expect(res.body.decision).toBe('needs_review');
  return { actionKey: res.body.action_key, payloadHash: res.body.payload_hash, body };
}

/** How a case tampers with what is sealed, as an attacker might. */
export interface ContextAlteration {
  /** Another gate request sealed in place of the one gated. */
  body?: Record<string, unknown>;
  /** Other associated data than the action's own. */
  binding?: { action_key: string; payload_hash: string };
  /** One bit of the ciphertext flipped after sealing. */
  flipByte?: boolean;
}

/**
 * The extension's sharing step: asks whom to seal to, seals to each recipient and posts only the
 * ciphertexts. Returns the recipients answer and what was posted.
 */
export async function shareContext(world: ConsoleWorld, employeeKey: string, paused: Paused, alter: ContextAlteration = {}) {
  const answer = await world.ctx.request(`/v1/reviews/${paused.actionKey}/context-recipients`, { key: employeeKey });
  expect(answer.status, answer.text).toBe(200);
  const plaintext = encodeReviewContext({ format: REVIEW_CONTEXT_FORMAT, gate_request: alter.body ?? paused.body });
  const binding = alter.binding ?? { action_key: paused.actionKey, payload_hash: paused.payloadHash };
  const ciphertexts = [];
  for (const r of answer.body.recipients as { key_id: string; public_key: string }[]) {
    const sealed = await sealReviewContext(fromBase64Url(r.public_key), plaintext, binding);
    const ct = Uint8Array.from(sealed.ct);
    if (alter.flipByte) ct[Math.floor(ct.length / 2)]! ^= 0x01;
    ciphertexts.push({ key_id: r.key_id, enc: toBase64Url(sealed.enc), ct: toBase64Url(ct) });
  }
  const stored = await world.ctx.request(`/v1/reviews/${paused.actionKey}/context`, { json: { ciphertexts }, key: employeeKey });
  expect(stored.status, stored.text).toBe(201);
  return { recipients: answer.body as { review_context: string; payload_hash: string; recipients: unknown[] }, ciphertexts };
}
