/**
 * The offline verifier's anchoring commands as an auditor runs them against a real companion
 * process on loopback: `svc-verify bundle <action_key> --out dir`, then stock tools; and
 * inclusion proofs, epoch headers and consistency proofs saved as files.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { closedLoopbackPort } from './closed-port.ts';

const work = mkdtempSync(path.join(tmpdir(), 'svc-verify-proofs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
afterEach(cleanupCompanions);

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'companion/cli/verify.ts'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('svc-verify anchoring commands', () => {
  it('fetches a bundle that stock tools verify, and checks inclusion, epoch and consistency files', async () => {
    const c = await start(tempDataDir(), { SVC_EPOCH_SECONDS: '1' });
    const signup = await (await fetch(`${c.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `cli-${process.pid}@example.com` }) })).json();
    const key: string = signup.api_key;
    const post = (body: unknown) =>
      fetch(`${c.url}/v1/record`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': key }, body: JSON.stringify(body) }).then((r) => r.json());
    const body = { pack: 'eu-ai-act', event_type: 'output_marked', occurred_at: '2025-01-01T00:00:00Z', source_payload: { content_sha256: 'b'.repeat(64) } };
    const sealed = await post(body);
    expect(sealed.action_key).toBeTruthy();

    const out = path.join(work, 'bundle');
    const env = { SVC_URL: c.url, SVC_API_KEY: key };
    const fetched = await run(['bundle', sealed.action_key, '--out', out], env);
    expect(fetched.code, fetched.err).toBe(0);
    expect(fetched.out).toContain('openssl pkeyutl -verify');
    const attestation = JSON.parse(readFileSync(path.join(out, 'attestation.json'), 'utf8'));
    expect(execFileSync('sha256sum', ['payload.json'], { cwd: out, encoding: 'utf8' }).slice(0, 64)).toBe(attestation.packet_hash);
    execFileSync('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'key.pem', '-rawin', '-in', 'attestation.json', '-sigfile', 'attestation.sig'], { cwd: out });
    expect((await run([out, '--keys', path.join(out, 'service-keys.json')])).code).toBe(0);
    expect((await run(['bundle', 'law:proposed-action:nope', '--out', path.join(work, 'x')], env)).code).toBe(2);
    expect((await run(['bundle', sealed.action_key, '--out', path.join(work, 'y')], { SVC_URL: c.url, SVC_API_KEY: '' })).code).toBe(2);

    // The inclusion proof, once the 1-second epoch has closed.
    let proof: any;
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${c.url}/v1/records/${sealed.action_key}/inclusion-proof`, { headers: { 'x-service-key': key } });
      if (res.status === 200) {
        proof = await res.json();
        break;
      }
      expect(res.status).toBe(409);
      await new Promise((r) => setTimeout(r, 100));
    }
    const keys = path.join(out, 'service-keys.json');
    const proofFile = path.join(work, 'proof.json');
    writeFileSync(proofFile, JSON.stringify(proof));
    const ok = await run([proofFile, '--keys', keys]);
    expect(ok.code, ok.out + ok.err).toBe(0);
    expect(ok.out).toContain('PASS  tenant_inclusion');
    proof.epoch.canonical_root = proof.epoch.canonical_root.replace(/^./, (ch: string) => (ch === '0' ? '1' : '0'));
    writeFileSync(proofFile, JSON.stringify(proof));
    const bad = await run([proofFile, '--keys', keys]);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('FAIL  epoch_inclusion');

    await post(body);
    let latest = 0;
    for (let i = 0; i < 100 && latest < 1; i++) {
      await new Promise((r) => setTimeout(r, 100));
      latest = (await (await fetch(`${c.url}/epochs?after=0`)).json()).epochs.length;
    }
    const header = await (await fetch(`${c.url}/epochs/1`)).json();
    writeFileSync(path.join(work, 'epoch.json'), JSON.stringify(header));
    expect((await run([path.join(work, 'epoch.json'), '--keys', keys])).code).toBe(0);
    const consistency = await (await fetch(`${c.url}/epochs/consistency?from=0&to=1`)).json();
    writeFileSync(path.join(work, 'consistency.json'), JSON.stringify(consistency));
    expect((await run([path.join(work, 'consistency.json')])).code).toBe(0);
    consistency.from.root = consistency.to.root;
    writeFileSync(path.join(work, 'consistency.json'), JSON.stringify(consistency));
    const inconsistent = await run([path.join(work, 'consistency.json')]);
    expect(inconsistent.code).toBe(1);
    expect(inconsistent.out).toContain('FAIL  consistency');
  }, 120_000);
});

describe('svc-verify bundle when the companion cannot be reached', () => {
  it('names the URL it could not reach and why, in one line, exit 2; --url wins over SVC_URL', async () => {
    const port = await closedLoopbackPort();
    const base = `http://127.0.0.1:${port}`;
    const expected = `svc-verify bundle: could not reach ${base}/evidence-packets/seal-bundle/batch: connection refused\n`;
    const fromEnv = await run(['bundle', 'law:proposed-action:x', '--out', path.join(work, 'z')], { SVC_URL: base, SVC_API_KEY: 'svc_test_x' });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.err).toBe(expected);
    const fromFlag = await run(['bundle', 'law:proposed-action:x', '--out', path.join(work, 'z'), '--url', base], { SVC_URL: 'http://127.0.0.1:1', SVC_API_KEY: 'svc_test_x' });
    expect(fromFlag.err).toBe(expected);
  }, 60_000);
});
