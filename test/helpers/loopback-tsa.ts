/**
 * A real RFC 3161 time-stamp authority on loopback: a test CA and a TSA certificate (extended
 * key usage timeStamping, critical) made with the openssl CLI in a temporary folder, and
 * `openssl ts -reply` behind a small node HTTP server speaking RFC 3161 §3.4 over HTTP
 * (POST application/timestamp-query, answer application/timestamp-reply).
 *
 * `down()` closes the listener (connections are refused), `up()` listens again on the same
 * port. Requests are answered one at a time: openssl keeps the serial number in a file.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TsaAuthority {
  dir: string;
  /** The root CA certificate (PEM file). */
  caFile: string;
  /** The TSA's own certificate (PEM file). */
  tsaCertFile: string;
  caPem: string;
  /** http://127.0.0.1:<port>/tsa */
  url: string;
  /** TimeStampReqs answered so far. */
  requests: number;
  /** From now on, take requests and answer none (a hung authority) until release(). */
  hold(): void;
  /** Resolves once `n` requests are being held. */
  waitForHeld(n: number): Promise<void>;
  /** Drops the held requests (their connections are cut) and answers again. */
  release(): void;
  up(): Promise<void>;
  down(): Promise<void>;
  /** Answers a TimeStampReq (DER) with a TimeStampResp (DER), without HTTP. */
  reply(query: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

const dirs: string[] = [];

/** The TSA certificate's serial number (a test re-issues the TSA key under it with other extensions). */
export const TSA_CERT_SERIAL = 4097;

/** Runs openssl with its arguments; throws with its stderr on failure. */
export async function openssl(args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await run('openssl', args, { cwd, maxBuffer: 4 * 1024 * 1024 });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`openssl ${args.join(' ')} failed: ${err.stderr ?? err.message}`);
  }
}

/**
 * Makes a CA and a TSA certificate under it in a new temporary folder. `name` tells two
 * authorities apart in their subjects (a second, untrusted CA in the tests).
 */
export async function makeAuthority(name = 'Test'): Promise<Pick<TsaAuthority, 'dir' | 'caFile' | 'tsaCertFile' | 'caPem' | 'reply'>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tsa-'));
  dirs.push(dir);
  const f = (n: string) => path.join(dir, n);
  fs.writeFileSync(
    f('openssl.cnf'),
    `[ req ]
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
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = ${dir}
serial = $dir/tsaserial
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
ess_cert_id_alg = sha256
`,
  );
  fs.writeFileSync(f('tsaserial'), '01\n');
  const cnf = f('openssl.cnf');
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f('ca.key')]);
  await openssl(['req', '-new', '-x509', '-config', cnf, '-key', f('ca.key'), '-subj', `/O=${name} Trust/CN=${name} Root CA`, '-days', '3650', '-extensions', 'ca_ext', '-out', f('ca.crt')]);
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f('tsa.key')]);
  await openssl(['req', '-new', '-config', cnf, '-key', f('tsa.key'), '-subj', `/O=${name} Trust/CN=${name} TSA`, '-out', f('tsa.csr')]);
  await openssl([
    'x509', '-req', '-in', f('tsa.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-set_serial', String(TSA_CERT_SERIAL), '-days', '365',
    '-extfile', cnf, '-extensions', 'tsa_ext', '-out', f('tsa.crt'),
  ]);
  let n = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const reply = (query: Uint8Array): Promise<Uint8Array> => {
    const next = queue.then(async () => {
      const id = ++n;
      fs.writeFileSync(f(`q${id}.tsq`), query);
      await openssl(['ts', '-reply', '-config', cnf, '-section', 'tsa_config', '-queryfile', f(`q${id}.tsq`), '-out', f(`r${id}.tsr`)]);
      return new Uint8Array(fs.readFileSync(f(`r${id}.tsr`)));
    });
    queue = next.catch(() => undefined);
    return next;
  };
  return { dir, caFile: f('ca.crt'), tsaCertFile: f('tsa.crt'), caPem: fs.readFileSync(f('ca.crt'), 'utf8'), reply };
}

/** A TSA authority answering over HTTP on 127.0.0.1. */
export async function startTsa(name = 'Test'): Promise<TsaAuthority> {
  const authority = await makeAuthority(name);
  let server: http.Server | undefined;
  let port = 0;
  let holding = false;
  const held: http.ServerResponse[] = [];
  const heldWaiters: { n: number; resolve: () => void }[] = [];
  const tsa: TsaAuthority = {
    ...authority,
    url: '',
    requests: 0,
    hold() {
      holding = true;
    },
    waitForHeld(n) {
      return new Promise((resolve) => {
        if (held.length >= n) resolve();
        else heldWaiters.push({ n, resolve });
      });
    },
    release() {
      holding = false;
      for (const res of held.splice(0)) res.destroy();
    },
    async up() {
      if (server) return;
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (req.method !== 'POST' || req.url !== '/tsa' || req.headers['content-type'] !== 'application/timestamp-query') {
            res.writeHead(400, { 'content-type': 'text/plain' }).end('expected POST /tsa application/timestamp-query');
            return;
          }
          if (holding) {
            held.push(res);
            for (const w of [...heldWaiters]) if (held.length >= w.n) (heldWaiters.splice(heldWaiters.indexOf(w), 1), w.resolve());
            return;
          }
          authority.reply(new Uint8Array(Buffer.concat(chunks))).then(
            (answer) => {
              tsa.requests++;
              res.writeHead(200, { 'content-type': 'application/timestamp-reply', 'content-length': answer.length }).end(answer);
            },
            (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(e.message),
          );
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      tsa.url = `http://127.0.0.1:${port}/tsa`;
    },
    async down() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async close() {
      await tsa.down();
    },
  };
  await tsa.up();
  return tsa;
}

/** Removes every folder made here (call in afterAll). */
export function cleanupAuthorities(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}
