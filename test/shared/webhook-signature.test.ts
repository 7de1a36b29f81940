import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64Url, fromHex, toBase64, utf8 } from '../../shared/encoding.ts';
import type { SvcErrorCode } from '../../shared/errors.ts';
import { isSvcError } from '../../shared/errors.ts';
import { hmacSha256 } from '../../shared/hash.ts';
import {
  CHAT_SIGNATURE_HEADER,
  CHAT_TIMESTAMP_HEADER,
  assertChatRequest,
  assertDispatchSignature,
  assertEventSignature,
  buildEventHeaders,
  deriveWebhookKey,
  newEventId,
  newSigningSecret,
  parseEventSignatureHeader,
  signChatRequest,
  signDispatch,
  signEvent,
  signatureScheme,
  verifyChatRequest,
  verifyDispatch,
  verifyEvent,
} from '../../shared/webhook-signature.ts';
import { readVectorJson } from '../helpers/vectors.ts';

interface WebhookVectors {
  standard_webhooks: {
    secret: string;
    msg_id: string;
    timestamp: string;
    payload: string;
    expected_signature: string;
    signed_content: string;
    key_bytes_hex: string;
  };
  stripe_reference_only: { header_example: string; parsed: { t: string; v1: string[]; v0: string[] } };
}

interface ChatVector {
  headers: Record<string, string>;
  signing_secret: string;
  timestamp: string;
  body: string;
  expected_signature: string;
  negative_cases: { desc: string; body_suffix?: string; now?: number; expect_valid: boolean }[];
}

function expectCode(fn: () => unknown, code: SvcErrorCode): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(isSvcError(caught), `expected SvcError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
}

const KEY = deriveWebhookKey('whsec_test-secret-for-unit-tests');
const ID = 'evt_01hzx5m8k3q9r7t2v4w6y8z0ab';
const T = 1_700_000_000;
const BODY = '{"event":"record.sealed","tenant":"t_1","created_at":"2023-11-14T22:13:20Z"}';

function signed(over: { key?: string; id?: string; timestamp?: number; body?: string | Uint8Array } = {}) {
  return signEvent({ key: over.key ?? KEY, id: over.id ?? ID, timestamp: over.timestamp ?? T, body: over.body ?? BODY });
}

describe('HMAC-SHA256 primitive: Standard Webhooks vector', () => {
  const v = readVectorJson<WebhookVectors>('webhooks', 'webhook_signature_vectors.json').standard_webhooks;

  it('reproduces v1,<base64> from its secret, id, timestamp and body', () => {
    // Its key is the base64 body of the whsec_ secret, and its message order is
    // id.timestamp.body (ours is timestamp.id.body): this only checks the primitive.
    const key = new Uint8Array(Buffer.from(v.secret.slice('whsec_'.length), 'base64'));
    expect(key).toEqual(fromHex(v.key_bytes_hex));
    const content = `${v.msg_id}.${v.timestamp}.${v.payload}`;
    expect(content).toBe(v.signed_content);
    expect(`v1,${toBase64(hmacSha256(key, content))}`).toBe(v.expected_signature);
  });
});

describe('chat-platform v0 request signing: the platform docs example', () => {
  const v = readVectorJson<ChatVector>('slack-signature', 'slack_docs_example.json');
  const now = Number(v.timestamp);

  it('reproduces the documented signature and verifies it', () => {
    expect(signChatRequest({ signingSecret: v.signing_secret, timestamp: v.timestamp, rawBody: v.body })).toBe(
      v.expected_signature,
    );
    expect(v.headers[CHAT_SIGNATURE_HEADER]).toBe(v.expected_signature);
    const input = {
      signingSecret: v.signing_secret,
      timestamp: v.headers[CHAT_TIMESTAMP_HEADER]!,
      signature: v.headers[CHAT_SIGNATURE_HEADER]!,
      rawBody: utf8(v.body),
      now,
    };
    expect(verifyChatRequest(input)).toEqual({ ok: true });
    expect(() => assertChatRequest(input)).not.toThrow();
  });

  it('fails every negative case with the right code', () => {
    const base = { signingSecret: v.signing_secret, timestamp: v.timestamp, signature: v.expected_signature, rawBody: v.body, now };
    expect(v.negative_cases).toHaveLength(2);
    for (const c of v.negative_cases) {
      expect(c.expect_valid).toBe(false);
      if (c.body_suffix !== undefined) {
        expectCode(() => assertChatRequest({ ...base, rawBody: v.body + c.body_suffix }), 'WEBHOOK_SIGNATURE_MISMATCH');
      }
      if (c.now !== undefined) {
        expectCode(() => assertChatRequest({ ...base, now: c.now }), 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE');
      }
    }
    // The edge of the same window still passes.
    expect(verifyChatRequest({ ...base, now: now + 300 }).ok).toBe(true);
  });

  it('rejects a wrong secret, a malformed signature and a malformed timestamp', () => {
    const base = { signingSecret: v.signing_secret, timestamp: v.timestamp, signature: v.expected_signature, rawBody: v.body, now };
    expect(verifyChatRequest({ ...base, signingSecret: 'another-secret' })).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
    for (const signature of ['', v.expected_signature.slice(3), `v1=${v.expected_signature.slice(3)}`, v.expected_signature.slice(0, -1)]) {
      expectCode(() => assertChatRequest({ ...base, signature }), 'WEBHOOK_HEADER_MALFORMED');
    }
    for (const timestamp of ['', 'abc', '1531420618.5', '-1531420618']) {
      expectCode(() => assertChatRequest({ ...base, timestamp }), 'WEBHOOK_HEADER_MALFORMED');
    }
  });
});

describe('event signatures (interface-spec Events rules 3–5)', () => {
  it('derives the whsec_ key as node:crypto computes it independently, and signs with its hex string', () => {
    for (const secret of ['whsec_test-secret-for-unit-tests', newSigningSecret()]) {
      const expectedKey = createHash('sha256').update(`service-webhook-signing:${secret}`, 'utf8').digest('hex');
      const key = deriveWebhookKey(secret);
      expect(key).toBe(expectedKey);
      const { header, signature } = signEvent({ key, id: ID, timestamp: T, body: BODY });
      // Key bytes are the UTF-8 of the 64-char hex string, not its decoded 32 bytes.
      const expectedSig = createHmac('sha256', Buffer.from(expectedKey, 'utf8')).update(`${T}.${ID}.${BODY}`, 'utf8').digest('hex');
      expect(signature).toBe(expectedSig);
      expect(header).toBe(`t=${T},v1=${expectedSig}`);
    }
    expect(() => deriveWebhookKey('not-a-minted-secret')).toThrow(TypeError);
  });

  it('round-trips a string body and raw bytes that are not UTF-8', () => {
    const { header } = signed();
    expect(verifyEvent({ key: KEY, id: ID, timestamp: String(T), signature: header, body: BODY, now: T })).toEqual({ ok: true });
    expect(verifyEvent({ key: KEY, id: ID, signature: header, body: utf8(BODY), now: T + 10 })).toEqual({ ok: true });

    const raw = new Uint8Array([0x7b, 0xff, 0x00, 0xfe, 0x7d]);
    const bytesHeader = signed({ body: raw }).header;
    const expected = createHmac('sha256', KEY).update(Buffer.concat([Buffer.from(`${T}.${ID}.`), raw])).digest('hex');
    expect(bytesHeader).toBe(`t=${T},v1=${expected}`);
    expect(() => assertEventSignature({ key: KEY, id: ID, signature: bytesHeader, body: raw, now: T })).not.toThrow();
  });

  it('fails when one body byte, the id or the timestamp changes', () => {
    const { header, signature } = signed();
    const tampered = utf8(BODY);
    tampered[10] = tampered[10]! ^ 0x01;
    expectCode(() => assertEventSignature({ key: KEY, id: ID, signature: header, body: tampered, now: T }), 'WEBHOOK_SIGNATURE_MISMATCH');
    expectCode(() => assertEventSignature({ key: KEY, id: `${ID}x`, signature: header, body: BODY, now: T }), 'WEBHOOK_SIGNATURE_MISMATCH');
    // Both timestamp headers moved together: the MAC no longer covers them.
    expectCode(
      () => assertEventSignature({ key: KEY, id: ID, timestamp: String(T + 1), signature: `t=${T + 1},v1=${signature}`, body: BODY, now: T }),
      'WEBHOOK_SIGNATURE_MISMATCH',
    );
    // X-Service-Timestamp alone disagreeing with t= is an inconsistent request.
    expectCode(
      () => assertEventSignature({ key: KEY, id: ID, timestamp: String(T + 1), signature: header, body: BODY, now: T }),
      'WEBHOOK_HEADER_MALFORMED',
    );
    expect(verifyEvent({ key: deriveWebhookKey('whsec_other'), id: ID, signature: header, body: BODY, now: T })).toMatchObject({
      ok: false,
      code: 'WEBHOOK_SIGNATURE_MISMATCH',
    });
  });

  it('rejects an id whose dot could shift bytes between id and body', () => {
    // `t.evt_a..x` is both (id evt_a., body .x) and (id evt_a, body ..x).
    expect(() => signEvent({ key: KEY, id: 'evt_a.', timestamp: T, body: '.x' })).toThrow(TypeError);
    const { header } = signEvent({ key: KEY, id: 'evt_a', timestamp: T, body: '..x' });
    expectCode(() => assertEventSignature({ key: KEY, id: 'evt_a.', signature: header, body: '.x', now: T }), 'WEBHOOK_HEADER_MALFORMED');
  });

  it('enforces the 300 s tolerance in both directions', () => {
    const { header } = signed();
    const at = (now: number, toleranceSeconds?: number) =>
      verifyEvent({ key: KEY, id: ID, signature: header, body: BODY, now, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) });
    expect(at(T + 300)).toEqual({ ok: true });
    expect(at(T - 300)).toEqual({ ok: true });
    expect(at(T + 301)).toMatchObject({ ok: false, code: 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE' });
    expect(at(T - 301)).toMatchObject({ ok: false, code: 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE' });
    expect(at(T + 60, 30)).toMatchObject({ ok: false, code: 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE' });
    expect(at(T + 60, 60)).toEqual({ ok: true });
  });

  it('accepts any v1 matching any key while a secret is rotated', () => {
    const oldKey = deriveWebhookKey('whsec_old');
    const newKey = deriveWebhookKey('whsec_new');
    const both = `t=${T},v1=${signed({ key: oldKey }).signature},v1=${signed({ key: newKey }).signature}`;
    const check = (keys: string[], signature: string) => verifyEvent({ keys, id: ID, signature, body: BODY, now: T });
    expect(check([oldKey], both)).toEqual({ ok: true });
    expect(check([newKey], both)).toEqual({ ok: true });
    expect(check([newKey, oldKey], signed({ key: oldKey }).header)).toEqual({ ok: true });
    expect(check([deriveWebhookKey('whsec_unrelated')], both)).toMatchObject({ ok: false, code: 'WEBHOOK_SIGNATURE_MISMATCH' });
    expect(() => check([], both)).toThrow(TypeError);
  });

  it('parses headers strictly but tolerates whitespace between items', () => {
    const hex = 'ab'.repeat(32);
    expect(parseEventSignatureHeader(`t=${T},v1=${hex}`)).toEqual({ timestamp: T, v1: [hex] });
    expect(parseEventSignatureHeader(` t=${T} ,\tv1=${hex} , v1=${'cd'.repeat(32)} `)).toEqual({ timestamp: T, v1: [hex, 'cd'.repeat(32)] });
    expect(parseEventSignatureHeader(`v1=${hex},t=${T}`)).toEqual({ timestamp: T, v1: [hex] });

    const malformed = [
      '',
      `v1=${hex}`, // missing t
      `t=${T}`, // missing v1
      `t=abc,v1=${hex}`,
      `t=${T}.5,v1=${hex}`,
      `t=-${T},v1=${hex}`,
      `t=+${T},v1=${hex}`,
      `t=0${T},v1=${hex}`,
      `t=,v1=${hex}`,
      `t=99999999999999999,v1=${hex}`, // beyond a safe integer
      `t=${T},t=${T},v1=${hex}`,
      `t=${T},v1=${'zz'.repeat(32)}`, // not hex
      `t=${T},v1=${hex.toUpperCase()}`, // rule 3: lowercase hex
      `t=${T},v1=${hex.slice(2)}`, // not a SHA-256 length
      `t=${T},v1=`,
      `t=${T},,v1=${hex}`,
      `t=${T},v1=${hex},`,
      `t=${T};v1=${hex}`,
      `t = ${T},v1=${hex}`,
      `t=${T},v1=${hex},garbage`,
      `t=${T},v1=${hex},x=1`,
      `t=${T},v1=${hex},v2=`,
      `sha256=${hex}`,
    ];
    for (const header of malformed) {
      expectCode(() => parseEventSignatureHeader(header), 'WEBHOOK_HEADER_MALFORMED');
      expect(verifyEvent({ key: KEY, id: ID, signature: header, body: BODY, now: T })).toMatchObject({
        ok: false,
        code: 'WEBHOOK_HEADER_MALFORMED',
      });
    }
  });

  it('parses the Stripe docs header (reference only): v1 kept, v0 ignored', () => {
    const s = readVectorJson<WebhookVectors>('webhooks', 'webhook_signature_vectors.json').stripe_reference_only;
    expect(parseEventSignatureHeader(s.header_example)).toEqual({ timestamp: Number(s.parsed.t), v1: s.parsed.v1 });
  });

  it('ignores other schemes: a v0 entry alone never verifies', () => {
    const { signature } = signed();
    expect(verifyEvent({ key: KEY, id: ID, signature: `t=${T},v0=${signature},v1=${'00'.repeat(32)}`, body: BODY, now: T })).toMatchObject({
      ok: false,
      code: 'WEBHOOK_SIGNATURE_MISMATCH',
    });
    expect(verifyEvent({ key: KEY, id: ID, signature: `t=${T},v0=${'00'.repeat(32)},v1=${signature}`, body: BODY, now: T })).toEqual({ ok: true });
  });

  it('builds the spec headers', () => {
    const headers = buildEventHeaders({ key: KEY, event: 'record.sealed', id: ID, timestamp: T, body: BODY });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'X-Service-Event': 'record.sealed',
      'X-Service-Id': ID,
      'X-Service-Timestamp': String(T),
      'X-Service-Signature': signed().header,
    });
    expect(
      verifyEvent({
        key: KEY,
        id: headers['X-Service-Id']!,
        timestamp: headers['X-Service-Timestamp']!,
        signature: headers['X-Service-Signature']!,
        body: BODY,
        now: T,
      }),
    ).toEqual({ ok: true });
  });

  it('rejects timestamps that are not whole Unix seconds when signing', () => {
    for (const timestamp of [1.5, -1, Number.NaN, 2 ** 53]) {
      expect(() => signEvent({ key: KEY, id: ID, timestamp, body: BODY })).toThrow(TypeError);
    }
  });

  it('mints event ids and signing secrets from the platform CSPRNG', () => {
    const ids = Array.from({ length: 200 }, newEventId);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);

    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(fromBase64Url(secret.slice('whsec_'.length))).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });
});

describe('review-dispatch signatures (interface-spec Events rule 8)', () => {
  const key = 'resolved-secret-ref-value';
  const body = '{"event":"route.dispatch_ready","dispatch_key":"d_1"}';

  it('signs sha256=<hex> as node:crypto does and round-trips', () => {
    const header = signDispatch(key, body);
    expect(header).toBe(`sha256=${createHmac('sha256', key).update(body).digest('hex')}`);
    expect(verifyDispatch(key, header, body)).toEqual({ ok: true });
    expect(verifyDispatch(['old', key], header, utf8(body))).toEqual({ ok: true });
    // The spec does not fix the hex case for this scheme; the MAC bytes decide.
    expect(verifyDispatch(key, `sha256=${header.slice(7).toUpperCase()}`, body)).toEqual({ ok: true });
  });

  it('fails on a tampered body, a wrong key or a malformed header', () => {
    const header = signDispatch(key, body);
    expectCode(() => assertDispatchSignature(key, header, `${body} `), 'WEBHOOK_SIGNATURE_MISMATCH');
    expectCode(() => assertDispatchSignature('other', header, body), 'WEBHOOK_SIGNATURE_MISMATCH');
    for (const bad of ['', header.slice(7), `sha1=${header.slice(7)}`, `sha256=${header.slice(8)}`, `sha256=${'zz'.repeat(32)}`, `t=${T},v1=${header.slice(7)}`]) {
      expect(verifyDispatch(key, bad, body)).toMatchObject({ ok: false, code: 'WEBHOOK_HEADER_MALFORMED' });
    }
  });

  it('tells the two schemes apart by prefix', () => {
    expect(signatureScheme(signDispatch(key, body))).toBe('dispatch');
    expect(signatureScheme(signed().header)).toBe('event');
    expect(signatureScheme(`v1=${'ab'.repeat(32)},t=${T}`)).toBe('event');
    expect(signatureScheme('v0=abc')).toBe('event'); // shaped like an event header; the strict parse decides
    expect(signatureScheme('Bearer abc')).toBeNull();
    expect(signatureScheme('')).toBeNull();
  });
});

describe('property: sign → verify', () => {
  it('passes for random bodies, ids and timestamps, and fails after any single-byte change', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 256 }),
        fc.stringMatching(/^evt_[A-Za-z0-9_-]{1,40}$/),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (body, id, timestamp, secret, at, flip) => {
          const key = deriveWebhookKey(`whsec_${secret}`);
          const { header } = signEvent({ key, id, timestamp, body });
          expect(verifyEvent({ key, id, timestamp: String(timestamp), signature: header, body, now: timestamp })).toEqual({ ok: true });

          const changed = body.slice();
          const i = at % changed.length;
          changed[i] = changed[i]! ^ flip;
          expect(verifyEvent({ key, id, signature: header, body: changed, now: timestamp })).toMatchObject({
            ok: false,
            code: 'WEBHOOK_SIGNATURE_MISMATCH',
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
