/**
 * The delivery worker's event signature (webhooks/delivery.ts eventSignature, node:crypto from
 * the strings) against the reference signer and verifier in shared/webhook-signature.ts
 * (interface-spec Events rules 3–5): the same v1 for the same key, id, timestamp and body,
 * including keys and bodies outside ASCII, and every key of a rotation overlap.
 */
import { describe, expect, it } from 'vitest';
import { deriveWebhookKey, newEventId, newSigningSecret, signEvent, verifyEvent } from '../../shared/webhook-signature.ts';
import { deliveryHeaders, eventSignature } from '../../companion/webhooks/delivery.ts';

const bodies = [
  '{}',
  JSON.stringify({ event: 'record.sealed', tenant: 'ten_1', created_at: '2026-01-01T00:00:00.000Z', href: '/law/evidence-packets/a' }),
  JSON.stringify({ event: 'verify.failed', note: 'Zürich → 東京 🚀', failed_checks: ['seal'] }),
  'x'.repeat(70_000),
];
const keys = [deriveWebhookKey(newSigningSecret()), 'a secret_ref value', 'ключ-🔑', ''];

describe('event signature', () => {
  it('equals shared signEvent for every key, body and timestamp', () => {
    for (const key of keys) {
      for (const body of bodies) {
        for (const timestamp of [0, 1_764_000_000, Number.MAX_SAFE_INTEGER]) {
          const id = newEventId();
          expect(eventSignature(key, id, timestamp, body)).toBe(signEvent({ key, id, timestamp, body }).signature);
        }
      }
    }
  });

  it('gives headers the shared verifier accepts with either key of a rotation, and refuses when a byte changes', () => {
    const [current, previous] = [deriveWebhookKey(newSigningSecret()), deriveWebhookKey(newSigningSecret())];
    const row = { id: newEventId(), event: 'record.sealed', body: bodies[2]! };
    const headers = deliveryHeaders(row, [current, previous], 'service', 1_764_000_000);
    const header = headers['X-Service-Signature']!;
    expect(header).toMatch(/^t=1764000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const key of [current, previous]) {
      expect(verifyEvent({ key, id: row.id, signature: header, body: row.body, now: 1_764_000_000 })).toEqual({ ok: true });
      expect(verifyEvent({ key, id: row.id, signature: header, body: `${row.body} `, now: 1_764_000_000 }).ok).toBe(false);
    }
    expect(verifyEvent({ key: deriveWebhookKey(newSigningSecret()), id: row.id, signature: header, body: row.body, now: 1_764_000_000 }).ok).toBe(false);
  });

  it('refuses an id that could move bytes between the signed parts, and a timestamp that is not whole seconds', () => {
    expect(() => eventSignature('k', 'evt_a.', 1, '.x')).toThrow(TypeError);
    expect(() => eventSignature('k', 'msg_1', 1, '{}')).toThrow(TypeError);
    expect(() => eventSignature('k', newEventId(), 1.5, '{}')).toThrow(TypeError);
    expect(() => eventSignature('k', newEventId(), -1, '{}')).toThrow(TypeError);
  });
});
