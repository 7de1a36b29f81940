/**
 * Standard Webhooks signing (shared/webhook-standard.ts) against the reference libraries'
 * vector, and the receiver-side verifier (shared/webhook-verifier.ts) for both schemes.
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromHex, utf8 } from '../../shared/encoding.ts';
import { deriveWebhookKey, signEvent } from '../../shared/webhook-signature.ts';
import { assertStandardWebhook, buildStandardHeaders, standardKeyFromSecret, standardSecretForKey } from '../../shared/webhook-standard.ts';
import { verifyWebhook } from '../../shared/webhook-verifier.ts';
import { readVectorJson } from '../helpers/vectors.ts';

interface StandardVector {
  secret: string;
  msg_id: string;
  timestamp: string;
  payload: string;
  expected_signature: string;
  key_bytes_hex: string;
}

const v = readVectorJson<{ standard_webhooks: StandardVector }>('webhooks', 'webhook_signature_vectors.json').standard_webhooks;

describe('Standard Webhooks (shared/webhook-standard.ts)', () => {
  it('reproduces the reference libraries\' vector and verifies it', () => {
    const key = standardKeyFromSecret(v.secret);
    expect(key).toEqual(fromHex(v.key_bytes_hex));
    const headers = buildStandardHeaders({ keys: [key], id: v.msg_id, timestamp: Number(v.timestamp), body: v.payload });
    expect(headers['webhook-signature']).toBe(v.expected_signature);
    const input = { keys: [key], id: v.msg_id, timestamp: v.timestamp, signature: v.expected_signature, body: v.payload, now: Number(v.timestamp) };
    expect(() => assertStandardWebhook(input)).not.toThrow();
    expect(() => assertStandardWebhook({ ...input, body: `${v.payload} ` })).toThrow(/no v1 entry/);
    expect(() => assertStandardWebhook({ ...input, now: Number(v.timestamp) + 301 })).toThrow(/within 300 s/);
    // Other schemes' entries (v1a = Ed25519) are skipped, never trusted.
    expect(() => assertStandardWebhook({ ...input, signature: `v1a,${v.expected_signature.slice(3)}` })).toThrow(/at least one v1/);
  });

  it('publishes the derived key as a Standard secret whose decoded bytes are the HMAC key', () => {
    const key = deriveWebhookKey('whsec_example');
    expect(standardKeyFromSecret(standardSecretForKey(key))).toEqual(utf8(key));
  });
});

describe('verifyWebhook (receiver side)', () => {
  const secret = 'whsec_receiver-side-example';
  const body = '{"event":"record.sealed","tenant":"ten_1","created_at":"2025-01-01T00:00:00.000Z"}';
  const id = 'evt_01JGFJJZ00XCNCX34R737JS8AH';
  const t = 1_735_689_600;

  function serviceHeaders(keys: string[]) {
    const v1 = keys.map((k) => `v1=${signEvent({ key: k, id, timestamp: t, body }).signature}`);
    return { 'X-Service-Event': 'record.sealed', 'X-Service-Id': id, 'X-Service-Timestamp': String(t), 'X-Service-Signature': [`t=${t}`, ...v1].join(',') };
  }

  it('accepts the service scheme with the minted secret, reporting the id to dedupe on', () => {
    const headers = serviceHeaders([deriveWebhookKey(secret)]);
    expect(verifyWebhook({ headers, rawBody: body, secrets: [secret], now: t })).toEqual({
      ok: true,
      scheme: 'service',
      id,
      timestamp: t,
      event: 'record.sealed',
      payload: JSON.parse(body),
    });
    // Header names are case-insensitive, and a fetch Headers object works too.
    expect(verifyWebhook({ headers: new Headers(headers), rawBody: utf8(body), secrets: [secret], now: t }).ok).toBe(true);
  });

  it('uses a secret_ref value as the key itself, and any key of a rotation', () => {
    const raw = 'value-of-the-secret-ref';
    expect(createHash('sha256').update(raw).digest('hex')).not.toBe(raw);
    const headers = serviceHeaders([raw, deriveWebhookKey(secret)]);
    expect(verifyWebhook({ headers, rawBody: body, secrets: [raw], now: t }).ok).toBe(true);
    expect(verifyWebhook({ headers, rawBody: body, secrets: ['whsec_other', secret], now: t }).ok).toBe(true);
    expect(verifyWebhook({ headers, rawBody: body, secrets: ['whsec_other'], now: t })).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
  });

  it('rejects tampered bodies, stale timestamps and requests without a signature', () => {
    const headers = serviceHeaders([deriveWebhookKey(secret)]);
    expect(verifyWebhook({ headers, rawBody: body.replace('ten_1', 'ten_2'), secrets: [secret], now: t })).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
    expect(verifyWebhook({ headers, rawBody: body, secrets: [secret], now: t + 301 })).toMatchObject({ ok: false, code: 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE' });
    expect(verifyWebhook({ headers: { 'X-Service-Id': id }, rawBody: body, secrets: [secret], now: t })).toMatchObject({ ok: false, code: 'WEBHOOK_HEADER_MALFORMED' });
  });

  it('accepts the Standard Webhooks scheme with the published standard secret', () => {
    const key = deriveWebhookKey(secret);
    const standardSecret = standardSecretForKey(key);
    const headers = buildStandardHeaders({ keys: [key], id, timestamp: t, body });
    // An independent computation per the Standard: base64 HMAC with the decoded secret bytes.
    const expected = createHmac('sha256', Buffer.from(standardSecret.slice(6), 'base64')).update(`${id}.${t}.${body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    expect(verifyWebhook({ headers, rawBody: body, secrets: [standardSecret], now: t })).toMatchObject({ ok: true, scheme: 'standard-webhooks', id });
  });
});
