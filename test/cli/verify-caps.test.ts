/**
 * The offline verifier on hostile input, as a real process: a bundle whose payload.json is a
 * symbolic link to /dev/zero, an oversized file, a FIFO, and a `bundle --url` answer that drips
 * an endless body. Each is refused (exit 2, one line) with the process's peak memory bounded,
 * measured by /usr/bin/time -v; the refusal itself is what ends each run, so no test waits on a
 * clock.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BUNDLE_FILE_NAMES, buildBundle } from '../../shared/bundle.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { jwksFor, makeSealedPacket, testKey } from '../helpers/seal-fixtures.ts';

const work = fs.mkdtempSync(path.join(tmpdir(), 'svc-verify-caps-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/**
 * Peak memory allowed to a refused run: node with the TypeScript loader takes well under this
 * (about 150 MiB measured); reading /dev/zero or a 600 MB file took gigabytes.
 */
const MAX_RSS_KIB = 320 * 1024;

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string; maxRssKiB: number }> {
  const timeFile = path.join(work, `time-${process.hrtime.bigint()}.txt`);
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/time', ['-v', '-o', timeFile, process.execPath, '--import', 'tsx', path.join(REPO_ROOT, 'companion/cli/verify.ts'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const report = fs.readFileSync(timeFile, 'utf8');
      const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(report);
      resolve({ code, out, err, maxRssKiB: m ? Number(m[1]) : Number.NaN });
    });
  });
}

const key = testKey();
const jwksFile = path.join(work, 'service-keys.json');
fs.writeFileSync(jwksFile, JSON.stringify(jwksFor([{ key, status: 'active' }])));

function writeBundleDir(name: string): string {
  const { request, fields } = makeSealedPacket(key);
  const bundle = buildBundle(fields, request.seal, key.publicKey);
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of BUNDLE_FILE_NAMES) fs.writeFileSync(path.join(dir, f), bundle[f]);
  return dir;
}

describe('svc-verify caps what it reads', () => {
  it('still verifies a well-formed bundle under the cap', async () => {
    const r = await run([writeBundleDir('good'), '--keys', jwksFile]);
    expect(r.code, r.err).toBe(0);
  });

  it('refuses a bundle whose payload.json is a symbolic link to /dev/zero', async () => {
    const dir = writeBundleDir('zero');
    fs.rmSync(path.join(dir, 'payload.json'));
    fs.symlinkSync('/dev/zero', path.join(dir, 'payload.json'));
    const r = await run([dir, '--keys', jwksFile]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`svc-verify: ${path.join(dir, 'payload.json')} is a symbolic link; the verifier reads only regular files\n`);
    expect(r.maxRssKiB).toBeLessThan(MAX_RSS_KIB);
  });

  it('refuses a link even to a regular file, and a FIFO, in a bundle and as the target', async () => {
    const dir = writeBundleDir('linked');
    fs.renameSync(path.join(dir, 'attestation.json'), path.join(work, 'elsewhere.json'));
    fs.symlinkSync(path.join(work, 'elsewhere.json'), path.join(dir, 'attestation.json'));
    const linked = await run([dir, '--keys', jwksFile]);
    expect(linked.code).toBe(2);
    expect(linked.err).toContain('attestation.json is a symbolic link');

    const fifo = path.join(work, 'packet.json');
    execFileSync('mkfifo', [fifo]);
    const r = await run([fifo, '--keys', jwksFile]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`svc-verify: ${fifo} is not a regular file\n`);
  });

  it('refuses a file past the cap without reading it: 600 MB by default, and a smaller cap by flag or setting', async () => {
    const big = path.join(work, 'big.json');
    // Sparse: 600 MB long, no disk used.
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, 600 * 1024 * 1024);
    const r = await run([big, '--keys', jwksFile]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`svc-verify: ${big} is larger than the 64 MiB the verifier reads (--max-bytes, SVC_VERIFY_MAX_BYTES)\n`);
    expect(r.maxRssKiB).toBeLessThan(MAX_RSS_KIB);

    const dir = writeBundleDir('capped');
    const size = fs.statSync(path.join(dir, 'payload.json')).size;
    const byFlag = await run([dir, '--max-bytes', String(size - 1)]);
    expect(byFlag.code).toBe(2);
    expect(byFlag.err).toContain(`payload.json is larger than the ${size - 1} bytes the verifier reads`);
    const bySetting = await run([dir], { SVC_VERIFY_MAX_BYTES: String(size - 1) });
    expect(bySetting.code).toBe(2);
    expect(bySetting.err).toContain('payload.json is larger than');
    const bad = await run([dir, '--max-bytes', '12abc']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--max-bytes must be a positive whole number of bytes');
  });

  it('refuses a records export line past the cap, and a linked export', async () => {
    const file = path.join(work, 'long.ndjson');
    fs.writeFileSync(file, `${'x'.repeat(4096)}\n`);
    const r = await run([file, '--max-bytes', '1024']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('a line is longer than the 1024 bytes the verifier reads');
    const link = path.join(work, 'zero.ndjson');
    fs.symlinkSync('/dev/zero', link);
    const z = await run([link]);
    expect(z.code).toBe(2);
    expect(z.err).toContain('zero.ndjson is a symbolic link');
    expect(z.maxRssKiB).toBeLessThan(MAX_RSS_KIB);
  });

  it('cuts a `bundle --url` answer that drips an endless body at the cap, streaming it to disk', async () => {
    let served = 0;
    let cut = false;
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"records":[{"files":[{"name":"payload.json","content_base64":"');
      const chunk = Buffer.alloc(16 * 1024, 0x41);
      // Drips one chunk each time the socket drains, forever; only the client can end it.
      const drip = () => {
        if (res.destroyed) return;
        served += chunk.length;
        if (res.write(chunk)) setImmediate(drip);
        else res.once('drain', drip);
      };
      res.on('close', () => (cut = true));
      drip();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = path.join(work, 'dripped');
    const r = await run(['bundle', 'law/proposed-action/01J00000000000000000000000', '--out', out, '--url', url, '--max-bytes', String(4 * 1024 * 1024)], { SVC_API_KEY: 'sk_test_unused' });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `svc-verify bundle: the answer from ${url}/evidence-packets/seal-bundle/batch is larger than the 4 MiB the verifier reads (--max-bytes, SVC_VERIFY_MAX_BYTES); the rest was not read\n`,
    );
    expect(r.maxRssKiB).toBeLessThan(MAX_RSS_KIB);
    await expect.poll(() => cut).toBe(true);
    expect(served).toBeGreaterThan(4 * 1024 * 1024);
    // The partial download is not left behind.
    expect(fs.readdirSync(out)).toEqual([]);
  });
});
