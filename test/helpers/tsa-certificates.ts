/**
 * Bad time-stamp tokens made for real with the openssl CLI, for the checks of
 * shared/timestamp.ts: TSA certificates with chosen validity (openssl ca -startdate/-enddate,
 * since openssl x509 -days cannot go into the past), replies signed by such a certificate or
 * with a SHA-1 ESS signingCertificate (openssl ts -reply), and tokens signed with openssl cms
 * (a TSTInfo from a real reply, signed with or without the ESS signingCertificateV2 attribute,
 * by any certificate, which openssl ts -reply refuses to do for a certificate without the
 * timeStamping key usage).
 *
 * Works in the folder of an authority from ./loopback-tsa.ts (its ca.key, tsa.key, tsa.csr).
 */
import fs from 'node:fs';
import path from 'node:path';
import { openssl } from './loopback-tsa.ts';

export interface TsaFolder {
  dir: string;
  caFile: string;
}

/** Extensions a certificate can be issued with (sections of the config written below). */
export type TsaExtensions = 'tsa_ext' | 'server_ext' | 'noncritical_tsa_ext' | 'ca_ext';

let made = 0;

function caConfig(dir: string): string {
  const cnf = path.join(dir, 'ca-issue.cnf');
  if (fs.existsSync(cnf)) return cnf;
  fs.mkdirSync(path.join(dir, 'issued'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'index.txt'), '');
  fs.writeFileSync(
    cnf,
    `[ ca ]
default_ca = test_ca
[ test_ca ]
dir = ${dir}
database = $dir/index.txt
new_certs_dir = $dir/issued
serial = $dir/ca-serial
default_md = sha256
policy = policy_any
unique_subject = no
email_in_dn = no
[ policy_any ]
organizationName = optional
commonName = supplied
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ ca_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ tsa_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ server_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, serverAuth
subjectKeyIdentifier = hash
[ noncritical_tsa_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = timeStamping
subjectKeyIdentifier = hash
[ tsa_sha1 ]
dir = ${dir}
serial = $dir/tsaserial-sha1
crypto_device = builtin
signer_cert = $dir/tsa.crt
certs = $dir/ca.crt
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.55555.1.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha1
`,
  );
  fs.writeFileSync(path.join(dir, 'tsaserial-sha1'), '01\n');
  return cnf;
}

/** openssl ca's date format, GeneralizedTime (YYYYMMDDHHMMSSZ). */
export function caDate(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Issues a certificate for the authority's TSA key (tsa.csr) signed by its CA, valid from
 * `notBefore` to `notAfter`, with the given extensions and serial number; returns its PEM file.
 * Issuing with the authority's own serial gives the same issuer and serial number as its TSA
 * certificate: another certificate for the same key.
 */
export async function issueTsaCertificate(
  a: TsaFolder,
  opts: { notBefore: Date; notAfter: Date; extensions?: TsaExtensions; serial: number; csr?: string; ca?: { cert: string; key: string } },
): Promise<string> {
  const cnf = caConfig(a.dir);
  // A fresh database each time: the same serial may be issued again on purpose.
  fs.writeFileSync(path.join(a.dir, 'index.txt'), '');
  fs.writeFileSync(path.join(a.dir, 'ca-serial'), `${opts.serial.toString(16).padStart(4, '0')}\n`);
  const out = path.join(a.dir, `issued-${++made}.crt`);
  await openssl([
    'ca', '-batch', '-notext', '-config', cnf,
    '-cert', opts.ca?.cert ?? a.caFile, '-keyfile', opts.ca?.key ?? path.join(a.dir, 'ca.key'),
    '-in', opts.csr ?? path.join(a.dir, 'tsa.csr'), '-out', out,
    '-startdate', caDate(opts.notBefore), '-enddate', caDate(opts.notAfter), '-extensions', opts.extensions ?? 'tsa_ext',
  ]);
  return out;
}

/**
 * A root CA whose own validity is chosen (self-signed with openssl ca -selfsign), and a TSA
 * certificate under it valid for a year around now; returns both files and the CA key.
 */
export async function rootWithValidity(a: TsaFolder, notBefore: Date, notAfter: Date): Promise<{ caFile: string; caKey: string; tsaCert: string }> {
  const cnf = caConfig(a.dir);
  const n = ++made;
  const caKey = path.join(a.dir, `root-${n}.key`);
  const caCsr = path.join(a.dir, `root-${n}.csr`);
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', caKey]);
  await openssl(['req', '-new', '-config', cnf, '-key', caKey, '-subj', `/O=Dated Trust/CN=Dated Root CA ${n}`, '-out', caCsr]);
  fs.writeFileSync(path.join(a.dir, 'ca-serial'), `${(0x7000 + n).toString(16)}\n`);
  const caFile = path.join(a.dir, `root-${n}.crt`);
  await openssl([
    'ca', '-batch', '-notext', '-selfsign', '-config', cnf, '-keyfile', caKey, '-in', caCsr, '-out', caFile,
    '-startdate', caDate(notBefore), '-enddate', caDate(notAfter), '-extensions', 'ca_ext',
  ]);
  const year = 365 * 86_400_000;
  const tsaCert = await issueTsaCertificate(a, {
    notBefore: new Date(Date.now() - year),
    notAfter: new Date(Date.now() + year),
    serial: 0x7100 + n,
    ca: { cert: caFile, key: caKey },
  });
  return { caFile, caKey, tsaCert };
}

/**
 * openssl ts -reply to a TimeStampReq (DER), signed by `signerCert` (the authority's TSA key)
 * instead of its own certificate, and with `essAlg` sha1 an ESS signingCertificate (v1, SHA-1)
 * instead of signingCertificateV2. Returns the TimeStampResp (DER).
 */
export async function replyWith(a: TsaFolder, query: Uint8Array, opts: { signerCert?: string; essAlg?: 'sha1' | 'sha256' } = {}): Promise<Uint8Array> {
  const cnf = caConfig(a.dir);
  const n = ++made;
  const q = path.join(a.dir, `v${n}.tsq`);
  const r = path.join(a.dir, `v${n}.tsr`);
  fs.writeFileSync(q, query);
  const args = ['ts', '-reply', '-queryfile', q, '-out', r];
  // The authority's own section (ESS v2, SHA-256) or the SHA-1 one written above.
  if (opts.essAlg === 'sha1') args.push('-config', cnf, '-section', 'tsa_sha1');
  else args.push('-config', path.join(a.dir, 'openssl.cnf'), '-section', 'tsa_config');
  if (opts.signerCert) args.push('-signer', opts.signerCert, '-inkey', path.join(a.dir, 'tsa.key'));
  await openssl(args);
  return new Uint8Array(fs.readFileSync(r));
}

/**
 * A TimeStampToken signed with openssl cms over the TSTInfo of `token` (a real token): its
 * eContentType id-ct-TSTInfo, signed attributes as openssl cms makes them, with the ESS
 * signingCertificateV2 attribute only when `cades` (openssl cms -cades, RFC 5035).
 */
export async function cmsSignedToken(a: TsaFolder, token: Uint8Array, opts: { signerCert: string; signerKey?: string; cades: boolean }): Promise<Uint8Array> {
  const n = ++made;
  const tokenFile = path.join(a.dir, `cms-${n}-in.der`);
  const tstInfo = path.join(a.dir, `cms-${n}-tstinfo.der`);
  const out = path.join(a.dir, `cms-${n}-token.der`);
  fs.writeFileSync(tokenFile, token);
  // The encapsulated TSTInfo as openssl reads it (-noverify: the certificate is not the point).
  await openssl(['cms', '-verify', '-noverify', '-binary', '-inform', 'DER', '-in', tokenFile, '-out', tstInfo]);
  await openssl([
    'cms', '-sign', '-binary', '-nodetach', '-nosmimecap', '-md', 'sha256', '-econtent_type', '1.2.840.113549.1.9.16.1.4',
    ...(opts.cades ? ['-cades'] : []),
    '-signer', opts.signerCert, '-inkey', opts.signerKey ?? path.join(a.dir, 'tsa.key'),
    '-in', tstInfo, '-outform', 'DER', '-out', out,
  ]);
  return new Uint8Array(fs.readFileSync(out));
}
