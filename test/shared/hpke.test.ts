/**
 * Review context's HPKE (shared/hpke.ts): the cipher suite against the RFC 9180 vectors for
 * DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / ChaCha20Poly1305, base mode (test/vectors/hpke/),
 * then the module's own seal/open: a tampered ciphertext, swapped associated data, another
 * device's key or another info string are refused; payload_hash is recomputed from the plaintext.
 */
import { describe, expect, it } from 'vitest';
import { payloadHash } from '../../shared/attestation.ts';
import { fromHex, toHex, utf8 } from '../../shared/encoding.ts';
import { isSvcError } from '../../shared/errors.ts';
import { sha256Hex } from '../../shared/hash.ts';
import {
  checkReviewContext,
  decodeReviewContext,
  encodeReviewContext,
  generateRecipientKeyPair,
  openReviewContext,
  rawPublicKey,
  REVIEW_CONTEXT_FORMAT,
  REVIEW_CONTEXT_SUITE,
  reviewContextAad,
  reviewContextSuite,
  sealReviewContext,
} from '../../shared/hpke.ts';
import type { ReviewContextDocument } from '../../shared/hpke.ts';
import { readVectorJson } from '../helpers/vectors.ts';

interface HpkeVector {
  mode: number;
  kem_id: number;
  kdf_id: number;
  aead_id: number;
  info: string;
  ikmE: string;
  pkEm: string;
  skEm: string;
  ikmR: string;
  pkRm: string;
  skRm: string;
  enc: string;
  encryptions: { sequence_number: number; pt: string; aad: string; nonce: string; ct: string }[];
  exports: { exporter_context: string; L: number; exported_value: string }[];
}

const vectors = readVectorJson<HpkeVector[]>('hpke', 'rfc9180-x25519-sha256-chacha20poly1305-base.json');
const buf = (hex: string) => fromHex(hex).slice().buffer as ArrayBuffer;

describe('RFC 9180 A.2.1 vectors through the review context suite', () => {
  it('holds exactly the suite this module uses', () => {
    expect(vectors).toHaveLength(1);
    const v = vectors[0]!;
    expect({ mode: v.mode, kem_id: v.kem_id, kdf_id: v.kdf_id, aead_id: v.aead_id }).toEqual({ mode: 0, ...REVIEW_CONTEXT_SUITE });
    const s = reviewContextSuite();
    expect([s.kem.id, s.kdf.id, s.aead.id]).toEqual([v.kem_id, v.kdf_id, v.aead_id]);
  });

  for (const v of vectors) {
    it('DeriveKeyPair(ikmR) gives pkRm and skRm; ikmE gives pkEm and skEm', async () => {
      const s = reviewContextSuite();
      const r = await s.kem.deriveKeyPair(buf(v.ikmR));
      expect(toHex(new Uint8Array(await s.kem.serializePublicKey(r.publicKey)))).toBe(v.pkRm);
      expect(toHex(new Uint8Array(await s.kem.serializePrivateKey(r.privateKey)))).toBe(v.skRm);
      const e = await s.kem.deriveKeyPair(buf(v.ikmE));
      expect(toHex(new Uint8Array(await s.kem.serializePublicKey(e.publicKey)))).toBe(v.pkEm);
      expect(toHex(new Uint8Array(await s.kem.serializePrivateKey(e.privateKey)))).toBe(v.skEm);
    });

    it('SetupBaseS with the vector ephemeral key gives enc and every listed ct; SetupBaseR opens each to pt', async () => {
      const s = reviewContextSuite();
      const pkR = await s.kem.deserializePublicKey(buf(v.pkRm));
      const sender = await s.createSenderContext({ recipientPublicKey: pkR, info: buf(v.info), ekm: buf(v.ikmE) });
      expect(toHex(new Uint8Array(sender.enc))).toBe(v.enc);
      const skR = await s.kem.deserializePrivateKey(buf(v.skRm));
      const recipient = await s.createRecipientContext({ recipientKey: skR, enc: buf(v.enc), info: buf(v.info) });
      const last = Math.max(...v.encryptions.map((e) => e.sequence_number));
      const bySeq = new Map(v.encryptions.map((e) => [e.sequence_number, e]));
      const pt0 = v.encryptions[0]!.pt;
      let checked = 0;
      // The sequence number advances with each Seal (RFC 9180 §5.2), so every one up to the last is sealed.
      for (let seq = 0; seq <= last; seq++) {
        const listed = bySeq.get(seq);
        const aad = listed?.aad ?? toHex(utf8(`Count-${seq}`));
        const ct = toHex(new Uint8Array(await sender.seal(buf(listed?.pt ?? pt0), buf(aad))));
        const opened = toHex(new Uint8Array(await recipient.open(buf(ct), buf(aad))));
        expect(opened).toBe(listed?.pt ?? pt0);
        if (listed) {
          expect(ct, `ct of sequence number ${seq}`).toBe(listed.ct);
          checked++;
        }
      }
      expect(checked).toBe(v.encryptions.length);
      for (const x of v.exports) {
        expect(toHex(new Uint8Array(await sender.export(buf(x.exporter_context), x.L)))).toBe(x.exported_value);
      }
    });

    it('a ct with one bit flipped does not open (ChaCha20-Poly1305 tag, RFC 8439 §2.8)', async () => {
      const s = reviewContextSuite();
      const skR = await s.kem.deserializePrivateKey(buf(v.skRm));
      const recipient = await s.createRecipientContext({ recipientKey: skR, enc: buf(v.enc), info: buf(v.info) });
      const e = v.encryptions[0]!;
      const ct = fromHex(e.ct);
      ct[3]! ^= 0x01;
      await expect(recipient.open(ct.slice().buffer as ArrayBuffer, buf(e.aad))).rejects.toThrow();
    });
  }
});

const binding = { action_key: 'act_01JREVIEWCONTEXTTEST0000', payload_hash: 'a'.repeat(64) };

function sampleDocument(): ReviewContextDocument {
  const gate_request = { pack: 'law', proposed_action: 'Send a prompt', redacted_text: 'summarise the Hartley merger memo', client_nonce: 'abcdefghijklmnopqrstuv', idempotency_key: 'ag-1' };
  return {
    format: REVIEW_CONTEXT_FORMAT,
    gate_request,
    files: [{ name: 'memo.pdf', media_type: 'application/pdf', size: 1200, sha256: 'b'.repeat(64), name_sha256: sha256Hex(utf8('memo.pdf')) }],
  };
}

describe('sealReviewContext / openReviewContext', () => {
  it('round-trips to the holder of the key, with a fresh enc each time', async () => {
    const device = await generateRecipientKeyPair();
    const pt = encodeReviewContext(sampleDocument());
    const a = await sealReviewContext(await rawPublicKey(device.publicKey), pt, binding);
    const b = await sealReviewContext(await rawPublicKey(device.publicKey), pt, binding);
    expect(a.enc).toHaveLength(32);
    expect(toHex(a.enc)).not.toBe(toHex(b.enc));
    expect(a.ct.length).toBe(pt.length + 16);
    expect(toHex(await openReviewContext(device, a, binding))).toBe(toHex(pt));
  });

  it('opens with a non-extractable private key (how the console keeps it)', async () => {
    const device = (await crypto.subtle.generateKey({ name: 'X25519' }, false, ['deriveBits'])) as CryptoKeyPair;
    expect(device.privateKey.extractable).toBe(false);
    const pt = encodeReviewContext(sampleDocument());
    const sealed = await sealReviewContext(await rawPublicKey(device.publicKey), pt, binding);
    expect(toHex(await openReviewContext(device, sealed, binding))).toBe(toHex(pt));
  });

  it('refuses a tampered ciphertext, a tampered enc, swapped associated data and another device', async () => {
    const device = await generateRecipientKeyPair();
    const other = await generateRecipientKeyPair();
    const sealed = await sealReviewContext(await rawPublicKey(device.publicKey), encodeReviewContext(sampleDocument()), binding);
    const refused = async (p: Promise<unknown>) => {
      const err = await p.then(() => undefined, (e: unknown) => e);
      expect(isSvcError(err, 'HPKE_OPEN_FAILED'), String(err)).toBe(true);
    };
    const ct = sealed.ct.slice();
    ct[ct.length - 1]! ^= 0x80;
    await refused(openReviewContext(device, { enc: sealed.enc, ct }, binding));
    const enc = sealed.enc.slice();
    enc[0]! ^= 0x01;
    await refused(openReviewContext(device, { enc, ct: sealed.ct }, binding));
    await refused(openReviewContext(device, sealed, { ...binding, action_key: 'act_01JREVIEWCONTEXTOTHER000' }));
    await refused(openReviewContext(device, sealed, { ...binding, payload_hash: 'c'.repeat(64) }));
    await refused(openReviewContext(other, sealed, binding));
  });

  it('binds {action_key, payload_hash} as their JCS bytes', () => {
    expect(new TextDecoder().decode(reviewContextAad(binding))).toBe(`{"action_key":"${binding.action_key}","payload_hash":"${binding.payload_hash}"}`);
  });

  it('refuses a public key that is not 32 bytes', async () => {
    const err = await sealReviewContext(new Uint8Array(31), utf8('x'), binding).catch((e: unknown) => e);
    expect(isSvcError(err, 'HPKE_KEY_INVALID')).toBe(true);
  });
});

describe('checkReviewContext', () => {
  it('matches when payload_hash recomputed from the gate request equals the sealed one', () => {
    const doc = decodeReviewContext(encodeReviewContext(sampleDocument()));
    const sealed = payloadHash(sampleDocument().gate_request);
    expect(checkReviewContext(doc, sealed)).toMatchObject({ match: true, computed: sealed, file_name_mismatches: [] });
  });

  it('is a mismatch for one changed character of the request, or a file name that does not hash to its name_sha256', () => {
    const sealed = payloadHash(sampleDocument().gate_request);
    const edited = sampleDocument();
    edited.gate_request.redacted_text = 'summarise the Hartley merger memo!';
    expect(checkReviewContext(edited, sealed).match).toBe(false);
    const renamed = sampleDocument();
    renamed.files![0]!.name = 'other.pdf';
    expect(checkReviewContext(renamed, sealed)).toMatchObject({ match: false, file_name_mismatches: [0] });
  });

  it('refuses a plaintext that is not a review context document', () => {
    for (const bytes of [utf8('not json'), utf8('{"format":"x","gate_request":{}}'), utf8('{"format":"svc.review-context/v1","gate_request":[]}')]) {
      expect(isSvcError((() => { try { decodeReviewContext(bytes); } catch (e) { return e; } })(), 'REVIEW_CONTEXT_MALFORMED')).toBe(true);
    }
  });
});
