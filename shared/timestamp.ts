/**
 * RFC 3161 time-stamp tokens over epoch checkpoints: building the request, and verifying a
 * response or a stored token as named checks, like ./anchor-verify.ts. A token from a time-stamp
 * authority the verifier trusts shows that the checkpoint existed at genTime, whoever runs the
 * service: the operator cannot later re-sign another history with an earlier date.
 *
 * What is timestamped: the checkpoint's signed body (c2sp.org/tlog-checkpoint), that is the
 * UTF-8 bytes of the `checkpoint` note up to and including the newline before its blank line
 * ("<origin>\n<size>\n<base64 root>\n"). The message imprint is SHA-256 of those bytes. The body
 * names the epoch log's size and root, whose newest leaf is the epoch's epoch_digest, so the
 * token dates the whole history up to that epoch; cosignature lines a witness adds later do not
 * change it.
 *
 * Checks (RFC 3161 §2.4.2 and §2.3): status granted (a response only), a SignedData token whose
 * content is TSTInfo, the imprint (SHA-256 over exactly those bytes), the nonce when one was
 * sent, the CMS signature (RFC 5652 §5.6), the ESS signing-certificate attribute naming the
 * certificate that signed (RFC 3161 §2.4.1 and RFC 5816 §2.2.1: signingCertificate with a SHA-1
 * hash or signingCertificateV2 of RFC 5035 with its own hash), the signer certificate valid at
 * genTime, its path to a trusted root with every certificate valid at genTime (RFC 5280 §6), and
 * the signer's extended key usage: exactly id-kp-timeStamping, critical. Built on pkijs and
 * asn1js with WebCrypto; browser-safe. Hostile input never throws: a malformed token is a
 * failed check.
 *
 * Validity is judged at genTime, never at the time of verification: a token stays valid after
 * its authority's certificate expires (RFC 3161 §4, item 1: tokens made before a TSA retires
 * its certificate remain valid; archived evidence is verified long after it was stamped).
 * The trust placed in genTime is the TSA's own statement, signed; an expired or revoked key
 * could back-date, which is why several authorities may be required (the verifier policy).
 */
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { fromUtf8, toBase64, toHex, utf8 } from './encoding.ts';
import { sha256 } from './hash.ts';

/** id-sha256 (RFC 5754 §2.2): the one imprint algorithm requested and accepted. */
export const SHA256_OID = '2.16.840.1.101.3.4.2.1';
/** id-ct-TSTInfo (RFC 3161 §2.4.2). */
export const TSTINFO_OID = '1.2.840.113549.1.9.16.1.4';
/** id-signedData (RFC 5652 §5.1). */
const SIGNED_DATA_OID = '1.2.840.113549.1.7.2';
/** id-data (RFC 5652 §4). */
const ID_DATA_OID = '1.2.840.113549.1.7.1';
/** id-kp-timeStamping (RFC 3161 §2.3). */
export const TIME_STAMPING_OID = '1.3.6.1.5.5.7.3.8';
const EXT_KEY_USAGE_OID = '2.5.29.37';
/** id-aa-signingCertificate (RFC 2634 §5.4): ESSCertID with a SHA-1 certHash. */
const SIGNING_CERTIFICATE_OID = '1.2.840.113549.1.9.16.2.12';
/** id-aa-signingCertificateV2 (RFC 5035 §3): ESSCertIDv2 with its hash algorithm. */
const SIGNING_CERTIFICATE_V2_OID = '1.2.840.113549.1.9.16.2.47';
/** The certHash algorithms accepted, as WebCrypto names them. */
const CERT_HASHES: Record<string, string> = {
  '1.3.14.3.2.26': 'SHA-1',
  [SHA256_OID]: 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};
/** RFC 3161 §3.4 media types. */
export const TIMESTAMP_QUERY_TYPE = 'application/timestamp-query';
export const TIMESTAMP_REPLY_TYPE = 'application/timestamp-reply';

export type TimestampCheckName =
  | 'tsa_status'
  | 'tsa_token'
  | 'tsa_imprint'
  | 'tsa_nonce'
  | 'tsa_signature'
  | 'tsa_ess'
  | 'tsa_validity'
  | 'tsa_chain'
  | 'tsa_eku';

export interface TimestampCheck {
  name: TimestampCheckName;
  ok: boolean;
  detail: string;
}

export interface TimestampResult {
  verified: boolean;
  checks: TimestampCheck[];
  /** TSTInfo genTime, RFC 3339 UTC, when the token parsed. */
  genTime?: string;
  /** The TimeStampToken's DER bytes (from a response: the token inside it). */
  token?: Uint8Array;
  /** The signer certificate's subject, as "CN=…, O=…", when found. */
  signer?: string;
}

export interface TimestampExpectation {
  /** The timestamped bytes (see the head of this file); their SHA-256 is the imprint. */
  data: Uint8Array;
  /** Trusted root certificates, DER; the signer must chain to one of them. */
  roots: readonly Uint8Array[];
  /** The nonce sent, when checking a response to our own request. */
  nonce?: Uint8Array;
}

/** The bytes a checkpoint's timestamps cover: its signed body (see the head of this file). */
export function timestampedBytes(checkpoint: string): Uint8Array {
  const split = checkpoint.indexOf('\n\n');
  if (split < 0) throw new RangeError('expected a checkpoint note: body, a blank line, signature lines');
  return utf8(checkpoint.slice(0, split + 1));
}

/**
 * A fresh 64-bit nonce (RFC 3161 §2.4.1), as the bytes of a positive DER INTEGER: the top bit
 * clear and the next one set, so the encoding is exactly these 8 bytes and none is stripped.
 */
export function newNonce(): Uint8Array {
  const n = crypto.getRandomValues(new Uint8Array(8));
  n[0] = (n[0]! & 0x3f) | 0x40;
  return n;
}

const buf = (b: Uint8Array): ArrayBuffer => b.slice().buffer as ArrayBuffer;

/** TimeStampReq (RFC 3161 §2.4.1), DER: version 1, SHA-256 imprint, the nonce, certReq TRUE. */
export function timeStampRequest(data: Uint8Array, nonce: Uint8Array): Uint8Array {
  const req = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: SHA256_OID, algorithmParams: new asn1js.Null() }),
      hashedMessage: new asn1js.OctetString({ valueHex: buf(sha256(data)) }),
    }),
    nonce: new asn1js.Integer({ valueHex: buf(nonce) }),
    certReq: true,
  });
  return new Uint8Array(req.toSchema().toBER(false));
}

const pass = (name: TimestampCheckName, detail: string): TimestampCheck => ({ name, ok: true, detail });
const fail = (name: TimestampCheckName, detail: string): TimestampCheck => ({ name, ok: false, detail });
const notChecked = (name: TimestampCheckName, why: string): TimestampCheck => fail(name, `not checked: ${why}`);

/** PKIStatus values that carry a token (RFC 3161 §2.4.2): granted, grantedWithMods. */
const GRANTED = new Set([0, 1]);

/** Verifies a TimeStampResp (as a TSA answers, RFC 3161 §2.4.2) against what was asked. */
export async function verifyTimeStampResponse(response: Uint8Array, expect: TimestampExpectation): Promise<TimestampResult> {
  let resp: pkijs.TimeStampResp;
  try {
    resp = pkijs.TimeStampResp.fromBER(buf(response));
  } catch (e) {
    return done([fail('tsa_status', `not a TimeStampResp: ${message(e)}`)]);
  }
  const status = resp.status.status;
  if (!GRANTED.has(status) || !resp.timeStampToken) {
    const text = resp.status.statusStrings?.map((s) => s.valueBlock.value).join('; ');
    return done([fail('tsa_status', `status ${status}${text ? ` (${text})` : ''}: no token granted`)]);
  }
  const token = new Uint8Array(resp.timeStampToken.toSchema().toBER(false));
  const r = await verifyTimestampToken(token, expect);
  return { ...r, checks: [pass('tsa_status', `status ${status} (granted)`), ...r.checks], verified: r.verified };
}

/** Verifies a stored TimeStampToken (CMS ContentInfo, DER) over `expect.data`. */
export async function verifyTimestampToken(token: Uint8Array, expect: TimestampExpectation): Promise<TimestampResult> {
  let signed: pkijs.SignedData;
  let info: pkijs.ContentInfo;
  let tst: pkijs.TSTInfo;
  try {
    info = pkijs.ContentInfo.fromBER(buf(token));
    if (info.contentType !== SIGNED_DATA_OID) return done([fail('tsa_token', `content type ${info.contentType} is not SignedData`)]);
    signed = new pkijs.SignedData({ schema: info.content });
    if (signed.encapContentInfo.eContentType !== TSTINFO_OID || !signed.encapContentInfo.eContent) {
      return done([fail('tsa_token', `encapsulated content ${signed.encapContentInfo.eContentType} is not TSTInfo`)]);
    }
    if (signed.signerInfos.length !== 1) return done([fail('tsa_token', `expected one signer, found ${signed.signerInfos.length}`)]);
    tst = pkijs.TSTInfo.fromBER(signed.encapContentInfo.eContent.getValue());
  } catch (e) {
    return done([fail('tsa_token', `not a time-stamp token: ${message(e)}`)]);
  }
  const genTime = tst.genTime;
  if (!(genTime instanceof Date) || Number.isNaN(genTime.getTime())) return done([fail('tsa_token', 'TSTInfo has no valid genTime')]);
  const gen = genTime.toISOString();
  const checks: TimestampCheck[] = [pass('tsa_token', `TSTInfo signed by one signer, genTime ${gen}, policy ${tst.policy}`)];

  const imprint = tst.messageImprint;
  const ours = sha256(expect.data);
  const theirs = new Uint8Array(imprint.hashedMessage.valueBlock.valueHexView);
  if (imprint.hashAlgorithm.algorithmId !== SHA256_OID) checks.push(fail('tsa_imprint', `imprint algorithm ${imprint.hashAlgorithm.algorithmId} is not SHA-256`));
  else if (toHex(theirs) !== toHex(ours)) checks.push(fail('tsa_imprint', `token is over ${toHex(theirs)}, the checkpoint body hashes to ${toHex(ours)}`));
  else checks.push(pass('tsa_imprint', `SHA-256 imprint ${toHex(ours)} is the checkpoint body's`));

  if (expect.nonce) {
    const got = tst.nonce ? stripZeros(new Uint8Array(tst.nonce.valueBlock.valueHexView)) : undefined;
    if (!got) checks.push(fail('tsa_nonce', 'the token carries no nonce, one was sent'));
    else if (toHex(got) !== toHex(stripZeros(expect.nonce))) checks.push(fail('tsa_nonce', `nonce ${toHex(got)} is not the one sent`));
    else checks.push(pass('tsa_nonce', 'the nonce sent is echoed'));
  }

  // The signer's certificate, as the SignedData identifies it (RFC 5652 §5.3 sid).
  let signerCert: pkijs.Certificate | undefined;
  try {
    // pkijs checks a TSTInfo's imprint inside verify() and then skips the signature; the
    // imprint is checked on its own above, so the signature is checked on a copy labelled as
    // plain data (RFC 5652 §5.6 verifies the signed attributes, whatever the content type).
    const copy = new pkijs.SignedData({ schema: info.content });
    copy.encapContentInfo.eContentType = ID_DATA_OID;
    const r = await copy.verify({ signer: 0, checkChain: false, extendedMode: true });
    signerCert = r.signerCertificate ?? undefined;
    checks.push(r.signatureVerified ? pass('tsa_signature', `CMS signature verifies under ${subjectOf(signerCert)}`) : fail('tsa_signature', 'the CMS signature does not verify'));
  } catch (e) {
    const err = e as { message?: string; signerCertificate?: pkijs.Certificate | null };
    signerCert = err.signerCertificate ?? undefined;
    checks.push(fail('tsa_signature', `the CMS signature does not verify: ${err.message ?? String(e)}`));
  }

  if (!signerCert) {
    const why = 'no signer certificate in the token';
    checks.push(notChecked('tsa_ess', why), notChecked('tsa_validity', why), notChecked('tsa_chain', why), notChecked('tsa_eku', why));
    return done(checks, { genTime: gen, token });
  }
  checks.push(
    await essCheck(signed.signerInfos[0]!, signerCert),
    validityCheck(signerCert, genTime),
    await chainCheck(signed, signerCert, expect.roots, genTime),
    ekuCheck(signerCert),
  );
  return done(checks, { genTime: gen, token, signer: subjectOf(signerCert) });
}

async function chainCheck(signed: pkijs.SignedData, signer: pkijs.Certificate, roots: readonly Uint8Array[], at: Date): Promise<TimestampCheck> {
  if (roots.length === 0) return fail('tsa_chain', 'no trusted TSA roots were given');
  let trusted: pkijs.Certificate[];
  try {
    trusted = roots.map((der) => pkijs.Certificate.fromBER(buf(der)));
  } catch (e) {
    return fail('tsa_chain', `a trusted root is not a certificate: ${message(e)}`);
  }
  const certs = (signed.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate && c !== signer);
  // The path is built for the last certificate in `certs` (pkijs CertificateChainValidationEngine).
  const engine = new pkijs.CertificateChainValidationEngine({ trustedCerts: trusted, certs: [...certs, signer], checkDate: at });
  try {
    const r = await engine.verify();
    if (!r.result) return fail('tsa_chain', `${subjectOf(signer)} does not chain to a trusted root at genTime ${at.toISOString()}: ${r.resultMessage}`);
    return pass('tsa_chain', `${subjectOf(signer)} chains to a trusted root, every certificate valid at genTime ${at.toISOString()}`);
  } catch (e) {
    const r = e as { resultMessage?: string };
    return fail('tsa_chain', `${subjectOf(signer)} does not chain to a trusted root at genTime ${at.toISOString()}: ${r.resultMessage ?? message(e)}`);
  }
}

/**
 * RFC 3161 §2.4.1 (as updated by RFC 5816 §2.2.1): the signer includes, as a signed attribute,
 * ESS signingCertificate (RFC 2634 §5.4, SHA-1) or signingCertificateV2 (RFC 5035 §3, its hash
 * named, SHA-256 by default) whose first ESSCertID identifies the certificate that signed. It
 * binds the signature to that certificate: without it, anyone holding the TSA key could pair
 * the signature with another certificate issued for the same key (other validity, other key
 * usage) and the CMS signature would still verify. Each attribute present must name the signer;
 * its issuerSerial, when present, must be the signer's issuer and serial number.
 */
async function essCheck(signerInfo: pkijs.SignerInfo, cert: pkijs.Certificate): Promise<TimestampCheck> {
  const attrs = signerInfo.signedAttrs?.attributes ?? [];
  const found = [
    { version: 'signingCertificate', v2: false, attrs: attrs.filter((a) => a.type === SIGNING_CERTIFICATE_OID) },
    { version: 'signingCertificateV2', v2: true, attrs: attrs.filter((a) => a.type === SIGNING_CERTIFICATE_V2_OID) },
  ].filter((f) => f.attrs.length > 0);
  if (found.length === 0) {
    return fail('tsa_ess', 'the token has no ESS signingCertificate or signingCertificateV2 signed attribute (RFC 3161 §2.4.1, RFC 5816 §2.2.1)');
  }
  let der: Uint8Array;
  try {
    der = new Uint8Array(cert.toSchema(true).toBER(false));
  } catch (e) {
    return fail('tsa_ess', `the signer certificate cannot be encoded: ${message(e)}`);
  }
  const named: string[] = [];
  for (const f of found) {
    const attr = f.attrs[0]!;
    if (f.attrs.length !== 1 || attr.values.length !== 1) return fail('tsa_ess', `${f.version} must appear once with one value (RFC 5652 §11)`);
    let id: { hashName: string; hash: Uint8Array; issuerSerial?: asn1js.Sequence };
    try {
      id = essCertId(attr.values[0], f.v2);
    } catch (e) {
      return fail('tsa_ess', `${f.version} is malformed: ${message(e)}`);
    }
    const ours = new Uint8Array(await crypto.subtle.digest(id.hashName, buf(der)));
    if (toHex(ours) !== toHex(id.hash)) {
      return fail('tsa_ess', `${f.version} names the certificate with ${id.hashName} ${toHex(id.hash)}, not the one that signed (${toHex(ours)})`);
    }
    if (id.issuerSerial && !issuerSerialMatches(id.issuerSerial, cert)) {
      return fail('tsa_ess', `${f.version}'s issuerSerial is not the signer certificate's issuer and serial number`);
    }
    named.push(`${f.version} (${id.hashName})`);
  }
  return pass('tsa_ess', `${named.join(' and ')} names the certificate that signed`);
}

/** The first ESSCertID(v2) of a SigningCertificate(V2) value: the one naming the signer. */
function essCertId(value: unknown, v2: boolean): { hashName: string; hash: Uint8Array; issuerSerial?: asn1js.Sequence } {
  if (!(value instanceof asn1js.Sequence)) throw new RangeError('not a SEQUENCE');
  const certs = value.valueBlock.value[0];
  if (!(certs instanceof asn1js.Sequence) || certs.valueBlock.value.length === 0) throw new RangeError('no ESSCertID');
  const first = certs.valueBlock.value[0];
  if (!(first instanceof asn1js.Sequence)) throw new RangeError('ESSCertID is not a SEQUENCE');
  const parts = [...first.valueBlock.value];
  let hashName = 'SHA-1';
  if (v2) {
    // hashAlgorithm AlgorithmIdentifier DEFAULT {algorithm id-sha256} (RFC 5035 §4).
    hashName = 'SHA-256';
    if (parts[0] instanceof asn1js.Sequence) {
      const alg = new pkijs.AlgorithmIdentifier({ schema: parts.shift() });
      const named = CERT_HASHES[alg.algorithmId];
      if (!named) throw new RangeError(`certHash algorithm ${alg.algorithmId.slice(0, 80)} is not one of SHA-1, SHA-256, SHA-384, SHA-512`);
      hashName = named;
    }
  }
  const hash = parts[0];
  if (!(hash instanceof asn1js.OctetString)) throw new RangeError('certHash is not an OCTET STRING');
  const issuerSerial = parts[1];
  if (issuerSerial !== undefined && !(issuerSerial instanceof asn1js.Sequence)) throw new RangeError('issuerSerial is not a SEQUENCE');
  return { hashName, hash: new Uint8Array(hash.valueBlock.valueHexView), issuerSerial };
}

/** IssuerSerial (RFC 5035 §4): a directoryName equal to the certificate's issuer, and its serial number. */
function issuerSerialMatches(seq: asn1js.Sequence, cert: pkijs.Certificate): boolean {
  try {
    const [names, serial] = seq.valueBlock.value;
    if (!(serial instanceof asn1js.Integer)) return false;
    if (toHex(stripZeros(new Uint8Array(serial.valueBlock.valueHexView))) !== toHex(stripZeros(new Uint8Array(cert.serialNumber.valueBlock.valueHexView)))) return false;
    const general = new pkijs.GeneralNames({ schema: names });
    return general.names.some((n) => n.type === 4 && n.value instanceof pkijs.RelativeDistinguishedNames && n.value.isEqual(cert.issuer));
  } catch {
    return false;
  }
}

/**
 * The signer certificate was valid when the token was made: notBefore ≤ genTime ≤ notAfter
 * (RFC 5280 §4.1.2.5). Judged at genTime, not now, so a token outlives its certificate (see the
 * head of this file); a token dated outside the certificate's validity was never a valid token.
 */
function validityCheck(cert: pkijs.Certificate, at: Date): TimestampCheck {
  const from = cert.notBefore.value;
  const until = cert.notAfter.value;
  const gen = at.toISOString();
  if (at.getTime() < from.getTime()) return fail('tsa_validity', `the signer certificate is valid from ${from.toISOString()}, after genTime ${gen}`);
  if (at.getTime() > until.getTime()) return fail('tsa_validity', `the signer certificate expired ${until.toISOString()}, before genTime ${gen}`);
  return pass('tsa_validity', `the signer certificate (${from.toISOString()} to ${until.toISOString()}) was valid at genTime ${gen}`);
}

/** RFC 3161 §2.3: one extended key usage extension, critical, holding only id-kp-timeStamping. */
function ekuCheck(cert: pkijs.Certificate): TimestampCheck {
  const ekus = (cert.extensions ?? []).filter((e) => e.extnID === EXT_KEY_USAGE_OID);
  if (ekus.length !== 1) return fail('tsa_eku', `the signer certificate has ${ekus.length} extended key usage extensions, RFC 3161 §2.3 requires exactly one`);
  const eku = ekus[0]!;
  if (!eku.critical) return fail('tsa_eku', 'the signer certificate\'s extended key usage is not critical (RFC 3161 §2.3)');
  const purposes = (eku.parsedValue as pkijs.ExtKeyUsage | undefined)?.keyPurposes ?? [];
  if (purposes.length !== 1 || purposes[0] !== TIME_STAMPING_OID) {
    return fail('tsa_eku', `the signer certificate's extended key usage is ${purposes.join(', ') || '(unreadable)'}, not only id-kp-timeStamping`);
  }
  return pass('tsa_eku', 'extended key usage: id-kp-timeStamping only, critical');
}

const SUBJECT_NAMES: Record<string, string> = { '2.5.4.3': 'CN', '2.5.4.10': 'O', '2.5.4.11': 'OU', '2.5.4.6': 'C' };

function subjectOf(cert: pkijs.Certificate | undefined): string {
  if (!cert) return '(unknown signer)';
  const parts = cert.subject.typesAndValues
    .filter((t) => SUBJECT_NAMES[t.type])
    .map((t) => `${SUBJECT_NAMES[t.type]}=${String((t.value.valueBlock as { value?: unknown }).value ?? '')}`);
  return parts.join(', ') || '(unnamed signer)';
}

function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function done(checks: TimestampCheck[], extra: Omit<TimestampResult, 'verified' | 'checks'> = {}): TimestampResult {
  return { verified: checks.every((c) => c.ok), checks, ...extra };
}

/** Certificates from PEM text (every "BEGIN CERTIFICATE" block), DER; throws when there is none or one is not a certificate. */
export function certificatesFromPem(text: string): Uint8Array[] {
  const blocks = [...text.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) throw new RangeError('no PEM certificate (-----BEGIN CERTIFICATE-----) found');
  return blocks.map((m, i) => {
    const der = fromStdBase64(m[1]!.replace(/\s+/g, ''));
    try {
      pkijs.Certificate.fromBER(buf(der));
    } catch (e) {
      throw new RangeError(`PEM block ${i + 1} is not an X.509 certificate: ${message(e)}`);
    }
    return der;
  });
}

function fromStdBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A stored token as served with an epoch, an inclusion proof or a bundle. */
export interface ServedTimestamp {
  tsa: string;
  gen_time: string;
  token_b64: string;
}

export function servedTimestamp(tsa: string, genTime: string, token: Uint8Array): ServedTimestamp {
  return { tsa, gen_time: genTime, token_b64: toBase64(token) };
}

/** One served token's verification, with the TSA it names. */
export interface EpochTimestampResult extends TimestampResult {
  tsa: string;
}

/**
 * Verifies every token served with an epoch against its checkpoint and the trusted roots; a
 * malformed entry is a failed tsa_token check, never an exception.
 */
export async function verifyEpochTimestamps(timestamps: unknown, checkpoint: unknown, roots: readonly Uint8Array[]): Promise<EpochTimestampResult[]> {
  if (!Array.isArray(timestamps)) return [];
  let data: Uint8Array;
  try {
    data = timestampedBytes(String(checkpoint));
  } catch (e) {
    return timestamps.map((t) => ({ tsa: tsaOf(t), verified: false, checks: [fail('tsa_token', `the checkpoint is malformed: ${message(e)}`)] }));
  }
  const out: EpochTimestampResult[] = [];
  for (const t of timestamps) {
    const tsa = tsaOf(t);
    const b64 = (t as { token_b64?: unknown } | null)?.token_b64;
    let token: Uint8Array;
    try {
      if (typeof b64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw new RangeError('token_b64 is not base64');
      token = fromStdBase64(b64);
    } catch (e) {
      out.push({ tsa, verified: false, checks: [fail('tsa_token', message(e))] });
      continue;
    }
    const r = await verifyTimestampToken(token, { data, roots });
    const claimed = (t as { gen_time?: unknown }).gen_time;
    if (r.genTime !== undefined && claimed !== r.genTime) {
      r.checks.push(fail('tsa_token', `gen_time says ${String(claimed)}, the token's genTime is ${r.genTime}`));
      r.verified = false;
    }
    out.push({ tsa, ...r });
  }
  return out;
}

function tsaOf(t: unknown): string {
  const v = (t as { tsa?: unknown } | null)?.tsa;
  return typeof v === 'string' ? v.slice(0, 200) : '(unnamed)';
}

/** The checkpoint body as text, for messages and the openssl recipe. */
export function timestampedText(checkpoint: string): string {
  return fromUtf8(timestampedBytes(checkpoint));
}
