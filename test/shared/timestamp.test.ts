/**
 * shared/timestamp.ts against a real RFC 3161 authority: openssl ts -reply with a CA and a TSA
 * certificate made in the test (test/helpers/loopback-tsa.ts). Every check fails on its own
 * kind of bad token: another digest (tsa_imprint), another nonce (tsa_nonce), a flipped
 * signature byte (tsa_signature), an authority under another root (tsa_chain), a signer
 * certificate without the timeStamping key usage (tsa_eku), a refused request (tsa_status), no
 * ESS signing-certificate attribute or one naming another certificate (tsa_ess), a TSA
 * certificate expired or not yet valid at genTime (tsa_validity); a token outlives its
 * certificate. Bad tokens are made by openssl (./../helpers/tsa-certificates.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  certificatesFromPem,
  newNonce,
  timeStampRequest,
  timestampedBytes,
  verifyEpochTimestamps,
  verifyTimeStampResponse,
  verifyTimestampToken,
} from '../../shared/timestamp.ts';
import { TSA_CERT_SERIAL, cleanupAuthorities, makeAuthority, openssl } from '../helpers/loopback-tsa.ts';
import { cmsSignedToken, issueTsaCertificate, replyWith, rootWithValidity } from '../helpers/tsa-certificates.ts';

type Authority = Awaited<ReturnType<typeof makeAuthority>>;
let tsa: Authority;
let other: Authority;
let roots: Uint8Array[];

const CHECKPOINT = 'svc/epochs/abc\n3\nq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n\n\u2014 svc/epochs/abc AAAAAAAA\n';
const body = timestampedBytes(CHECKPOINT);

beforeAll(async () => {
  [tsa, other] = await Promise.all([makeAuthority('Test'), makeAuthority('Other')]);
  roots = certificatesFromPem(tsa.caPem);
}, 60_000);
afterAll(cleanupAuthorities);

async function stamp(data = body, nonce = newNonce(), by = tsa) {
  const response = await by.reply(timeStampRequest(data, nonce));
  return { response, nonce };
}

/** A token over the checkpoint body from the trusted authority, checked to verify. */
async function realToken(): Promise<Uint8Array> {
  const { response, nonce } = await stamp();
  const r = await verifyTimeStampResponse(response, { data: body, nonce, roots });
  expect(r.verified).toBe(true);
  return r.token!;
}

const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000);
const aroundNow = () => ({ notBefore: daysFromNow(-1), notAfter: daysFromNow(30) });

const failed = (r: { checks: { name: string; ok: boolean }[] }) => r.checks.filter((c) => !c.ok).map((c) => c.name);

describe('timestamped bytes', () => {
  it('are the checkpoint body: the note up to the newline before its blank line', () => {
    expect(new TextDecoder().decode(body)).toBe('svc/epochs/abc\n3\nq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n');
    expect(() => timestampedBytes('no blank line\n')).toThrow(RangeError);
  });
});

describe('verifyTimeStampResponse', () => {
  it('passes every check for a token over our bytes from a trusted authority', async () => {
    const { response, nonce } = await stamp();
    const r = await verifyTimeStampResponse(response, { data: body, nonce, roots });
    expect(r.checks.map((c) => [c.name, c.ok])).toEqual([
      ['tsa_status', true],
      ['tsa_token', true],
      ['tsa_imprint', true],
      ['tsa_nonce', true],
      ['tsa_signature', true],
      ['tsa_ess', true],
      ['tsa_validity', true],
      ['tsa_chain', true],
      ['tsa_eku', true],
    ]);
    expect(r.verified).toBe(true);
    expect(r.signer).toBe('O=Test Trust, CN=Test TSA');
    expect(Math.abs(Date.parse(r.genTime!) - Date.now())).toBeLessThan(5 * 60_000);
  });

  it('fails tsa_imprint for a token over another digest', async () => {
    const { response, nonce } = await stamp(new TextEncoder().encode('another checkpoint\n'));
    const r = await verifyTimeStampResponse(response, { data: body, nonce, roots });
    expect(failed(r)).toContain('tsa_imprint');
    expect(r.verified).toBe(false);
  });

  it('fails tsa_nonce when the nonce is not the one sent', async () => {
    const { response } = await stamp();
    const r = await verifyTimeStampResponse(response, { data: body, nonce: newNonce(), roots });
    expect(failed(r)).toEqual(['tsa_nonce']);
  });

  it('fails tsa_chain for an authority under another root', async () => {
    const { response, nonce } = await stamp(body, newNonce(), other);
    const r = await verifyTimeStampResponse(response, { data: body, nonce, roots });
    expect(failed(r)).toEqual(['tsa_chain']);
    // Trusted once its own root is given.
    expect((await verifyTimeStampResponse(response, { data: body, nonce, roots: certificatesFromPem(other.caPem) })).verified).toBe(true);
  });

  it('fails tsa_chain with no roots at all', async () => {
    const { response, nonce } = await stamp();
    expect(failed(await verifyTimeStampResponse(response, { data: body, nonce, roots: [] }))).toEqual(['tsa_chain']);
  });

  it('fails tsa_status when the authority refuses the request', async () => {
    // The authority accepts SHA-256 imprints only: a SHA-1 query is rejected (status 2).
    const file = path.join(tsa.dir, 'sha1-data.txt');
    fs.writeFileSync(file, body);
    const query = path.join(tsa.dir, 'sha1.tsq');
    await openssl(['ts', '-query', '-data', file, '-sha1', '-cert', '-out', query]);
    const response = await tsa.reply(new Uint8Array(fs.readFileSync(query)));
    const r = await verifyTimeStampResponse(response, { data: body, roots });
    expect(r.checks).toEqual([expect.objectContaining({ name: 'tsa_status', ok: false })]);
    expect(r.token).toBeUndefined();
  });

  it('fails on bytes that are not a response, never throwing', async () => {
    const r = await verifyTimeStampResponse(new Uint8Array([1, 2, 3]), { data: body, roots });
    expect(failed(r)).toEqual(['tsa_status']);
  });
});

describe('verifyTimestampToken', () => {
  it('fails tsa_signature when one byte of the signature is flipped', async () => {
    const { response, nonce } = await stamp();
    const token = (await verifyTimeStampResponse(response, { data: body, nonce, roots })).token!;
    expect((await verifyTimestampToken(token, { data: body, roots })).verified).toBe(true);
    // The SignerInfo's signature is the token's last element: its final byte is signature.
    const bad = token.slice();
    bad[bad.length - 2]! ^= 0x01;
    const r = await verifyTimestampToken(bad, { data: body, roots });
    expect(failed(r)).toEqual(['tsa_signature']);
  });

  it('fails tsa_eku when the signer certificate lacks a critical timeStamping key usage', async () => {
    // openssl ts -reply will not sign with such a certificate; openssl cms signs the TSTInfo of
    // a real token with the same TSA key under a certificate for server authentication, with
    // the ESS attribute naming it (-cades), so only the key usage is wrong.
    const token = await realToken();
    const cert = await issueTsaCertificate(tsa, { ...aroundNow(), extensions: 'server_ext', serial: 0x2001 });
    const r = await verifyTimestampToken(await cmsSignedToken(tsa, token, { signerCert: cert, cades: true }), { data: body, roots });
    expect(failed(r)).toEqual(['tsa_eku']);
    expect(r.checks.find((c) => c.name === 'tsa_eku')!.detail).toMatch(/not only id-kp-timeStamping/);
    // timeStamping alone but not critical (RFC 3161 §2.3 requires critical).
    const lax = await issueTsaCertificate(tsa, { ...aroundNow(), extensions: 'noncritical_tsa_ext', serial: 0x2005 });
    const laxToken = await verifyTimestampToken(await cmsSignedToken(tsa, token, { signerCert: lax, cades: true }), { data: body, roots });
    expect(failed(laxToken)).toEqual(['tsa_eku']);
    expect(laxToken.checks.find((c) => c.name === 'tsa_eku')!.detail).toMatch(/is not critical/);
    // The same signing under the TSA's own certificate passes every check.
    const good = await verifyTimestampToken(await cmsSignedToken(tsa, token, { signerCert: tsa.tsaCertFile, cades: true }), { data: body, roots });
    expect(good.checks.filter((c) => !c.ok)).toEqual([]);
  });

  it('fails tsa_ess when the token has no ESS signing-certificate attribute', async () => {
    const token = await realToken();
    const r = await verifyTimestampToken(await cmsSignedToken(tsa, token, { signerCert: tsa.tsaCertFile, cades: false }), { data: body, roots });
    expect(failed(r)).toEqual(['tsa_ess']);
    expect(r.checks.find((c) => c.name === 'tsa_ess')!.detail).toMatch(/no ESS signingCertificate/);
  });

  it('fails tsa_ess when the attribute names another certificate than the one that signed', async () => {
    // The TSA key and serial re-issued by the same CA, a valid timeStamping certificate in every
    // other respect: put in the token's certificates, the signature still verifies, but the
    // signed ESS attribute names the original certificate by its hash.
    const token = await realToken();
    const reissued = await issueTsaCertificate(tsa, { ...aroundNow(), serial: TSA_CERT_SERIAL });
    const swapped = withSignerCertificate(token, certificatesFromPem(fs.readFileSync(reissued, 'utf8'))[0]!);
    const r = await verifyTimestampToken(swapped, { data: body, roots });
    expect(failed(r)).toEqual(['tsa_ess']);
    expect(r.checks.find((c) => c.name === 'tsa_ess')!.detail).toMatch(/signingCertificateV2 names the certificate with SHA-256 [0-9a-f]{64}, not the one that signed/);
  });

  it('accepts the SHA-1 signingCertificate (v1) naming the signer, and refuses it naming another', async () => {
    const nonce = newNonce();
    const response = await replyWith(tsa, timeStampRequest(body, nonce), { essAlg: 'sha1' });
    const r = await verifyTimeStampResponse(response, { data: body, nonce, roots });
    expect(r.checks.filter((c) => !c.ok)).toEqual([]);
    expect(r.checks.find((c) => c.name === 'tsa_ess')!.detail).toMatch(/^signingCertificate \(SHA-1\)/);
    const reissued = await issueTsaCertificate(tsa, { ...aroundNow(), serial: TSA_CERT_SERIAL });
    const swapped = withSignerCertificate(r.token!, certificatesFromPem(fs.readFileSync(reissued, 'utf8'))[0]!);
    expect(failed(await verifyTimestampToken(swapped, { data: body, roots }))).toEqual(['tsa_ess']);
  });

  it('fails tsa_validity (and the path, tsa_chain) for a token signed after the TSA certificate expired', async () => {
    const cert = await issueTsaCertificate(tsa, { notBefore: daysFromNow(-30), notAfter: daysFromNow(-1), serial: 0x2002 });
    const nonce = newNonce();
    const r = await verifyTimeStampResponse(await replyWith(tsa, timeStampRequest(body, nonce), { signerCert: cert }), { data: body, nonce, roots });
    expect(failed(r)).toEqual(['tsa_validity', 'tsa_chain']);
    expect(r.checks.find((c) => c.name === 'tsa_validity')!.detail).toMatch(/the signer certificate expired .*, before genTime/);
  });

  it('fails tsa_validity (and tsa_chain) for a token signed before the TSA certificate is valid', async () => {
    const cert = await issueTsaCertificate(tsa, { notBefore: daysFromNow(1), notAfter: daysFromNow(30), serial: 0x2003 });
    const nonce = newNonce();
    const r = await verifyTimeStampResponse(await replyWith(tsa, timeStampRequest(body, nonce), { signerCert: cert }), { data: body, nonce, roots });
    expect(failed(r)).toEqual(['tsa_validity', 'tsa_chain']);
    expect(r.checks.find((c) => c.name === 'tsa_validity')!.detail).toMatch(/the signer certificate is valid from .*, after genTime/);
  });

  it('fails tsa_chain alone when the root was not valid at genTime, the TSA certificate itself being valid', async () => {
    const dated = await rootWithValidity(tsa, daysFromNow(-30), daysFromNow(-1));
    const nonce = newNonce();
    const response = await replyWith(tsa, timeStampRequest(body, nonce), { signerCert: dated.tsaCert });
    const r = await verifyTimeStampResponse(response, { data: body, nonce, roots: certificatesFromPem(fs.readFileSync(dated.caFile, 'utf8')) });
    expect(failed(r)).toEqual(['tsa_chain']);
  });

  it('keeps a token valid after its TSA certificate has expired: validity is judged at genTime, not now', async () => {
    // A TSA certificate that ends in two days; the token is made now, while it is valid.
    const notAfter = daysFromNow(2);
    const cert = await issueTsaCertificate(tsa, { notBefore: daysFromNow(-1), notAfter, serial: 0x2004 });
    const nonce = newNonce();
    const r = await verifyTimeStampResponse(await replyWith(tsa, timeStampRequest(body, nonce), { signerCert: cert }), { data: body, nonce, roots });
    expect(r.verified).toBe(true);
    // A verifier a year later, when the TSA certificate has long expired, still accepts it.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(daysFromNow(365));
      expect(Date.now()).toBeGreaterThan(notAfter.getTime());
      const later = await verifyTimestampToken(r.token!, { data: body, roots });
      expect(later.checks.filter((c) => !c.ok)).toEqual([]);
      expect(later.verified).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a malformed token as tsa_token', async () => {
    expect(failed(await verifyTimestampToken(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]), { data: body, roots }))).toEqual(['tsa_token']);
  });
});

describe('verifyEpochTimestamps', () => {
  it('verifies served tokens against the checkpoint and refuses one whose gen_time was edited', async () => {
    const { response, nonce } = await stamp();
    const r = await verifyTimeStampResponse(response, { data: body, nonce, roots });
    const served = { tsa: 'http://127.0.0.1/tsa', gen_time: r.genTime, token_b64: Buffer.from(r.token!).toString('base64') };
    const [ok] = await verifyEpochTimestamps([served], CHECKPOINT, roots);
    expect(ok!.verified).toBe(true);
    const [edited] = await verifyEpochTimestamps([{ ...served, gen_time: '2020-01-01T00:00:00.000Z' }], CHECKPOINT, roots);
    expect(edited!.verified).toBe(false);
    const [elsewhere] = await verifyEpochTimestamps([served], CHECKPOINT.replace('\n3\n', '\n4\n'), roots);
    expect(failed(elsewhere!)).toEqual(['tsa_imprint']);
    const [garbage] = await verifyEpochTimestamps([{ tsa: 'x', gen_time: 'y', token_b64: '%%%' }], CHECKPOINT, roots);
    expect(failed(garbage!)).toEqual(['tsa_token']);
  });
});

/** The token with its certificates replaced by `cert` (DER), everything signed left as it was. */
function withSignerCertificate(token: Uint8Array, cert: Uint8Array): Uint8Array {
  const info = pkijs.ContentInfo.fromBER(token.slice().buffer as ArrayBuffer);
  const signed = new pkijs.SignedData({ schema: info.content });
  signed.certificates = [pkijs.Certificate.fromBER(cert.slice().buffer as ArrayBuffer)];
  const out = new pkijs.ContentInfo({ contentType: info.contentType, content: signed.toSchema(true) });
  return new Uint8Array(out.toSchema().toBER(false));
}
