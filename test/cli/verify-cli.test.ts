/** The offline verifier as an auditor runs it: a real process, real files, exit codes 0/1/2. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILE_NAMES, buildBundle } from '../../shared/bundle.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { jwksFor, makeSealedPacket, testKey } from '../helpers/seal-fixtures.ts';
import { createTestContext } from '../companion/helpers.ts';
import { closedLoopbackPort } from './closed-port.ts';

const work = mkdtempSync(path.join(tmpdir(), 'svc-verify-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function run(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'companion/cli/verify.ts'), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const production = testKey();
const sandbox = testKey({ sandbox: true });
const jwksFile = path.join(work, 'service-keys.json');
writeFileSync(jwksFile, JSON.stringify(jwksFor([{ key: production, status: 'active' }])));

function writeBundleDir(name: string, key = production): string {
  const { request, fields } = makeSealedPacket(key);
  const bundle = buildBundle(fields, request.seal, key.publicKey);
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  for (const f of BUNDLE_FILE_NAMES) writeFileSync(path.join(dir, f), bundle[f]);
  return dir;
}

describe('svc-verify', () => {
  it('verifies a production bundle against the published keys: exit 0, one line per check', () => {
    const dir = writeBundleDir('prod');
    const r = run(dir, '--keys', jwksFile);
    expect(r.code).toBe(0);
    for (const check of ['canonical_form', 'packet_hash', 'attestation_hash', 'signature', 'key_identity', 'key_status']) {
      expect(r.out).toMatch(new RegExp(`PASS\\s+${check}`));
    }
    expect(r.out).toContain('RESULT: VERIFIED (production key, active)');
  });

  it('without --keys trusts only the sandbox key: production evidence fails key identity, exit 1', () => {
    const r = run(writeBundleDir('prod2'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAIL\s+key_identity/);
  });

  it('reports sandbox evidence as sandbox, never production', () => {
    const r = run(writeBundleDir('sandbox', sandbox));
    expect(r.code).toBe(0);
    expect(r.out).toContain('SANDBOX');
    expect(r.out).not.toContain('production key');
  });

  it('verifies a packet JSON (gate-response shape) and prints JSON with --json', () => {
    const { request } = makeSealedPacket(production);
    const gateResponse = {
      decision: request.decision,
      payload_hash: request.payload_hash,
      review_route: request.review_route,
      evidence_packet: { action_key: request.action_key, href: request.href, status: request.status, packet_hash: request.packet_hash, seal: request.seal },
    };
    const file = path.join(work, 'gate-response.json');
    writeFileSync(file, JSON.stringify(gateResponse));
    const r = run(file, '--keys', jwksFile, '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verified: true, key_status: 'active', action_key: request.action_key });

    const tampered = path.join(work, 'tampered.json');
    writeFileSync(tampered, JSON.stringify({ ...request, decision: 'allow' }));
    const t = run(tampered, '--keys', jwksFile, '--json');
    expect(t.code).toBe(1);
    expect(JSON.parse(t.out).checks.find((c: { name: string }) => c.name === 'packet_hash').ok).toBe(false);
  });

  it('verifies every bundle of a batch package independently', () => {
    const root = path.join(work, 'batch');
    mkdirSync(root);
    writeBundleDir('batch/a');
    writeBundleDir('batch/b');
    const r = run(root, '--keys', jwksFile);
    expect(r.code).toBe(0);
    expect(r.out.match(/RESULT: VERIFIED/g)).toHaveLength(2);
  });

  it('finds bundles nested at their action key segments, as the service archives them', () => {
    const root = path.join(work, 'archive');
    mkdirSync(root);
    writeBundleDir('archive/law/proposed-action/01JD3Q8Z5V7N4M2K6H8G0F1E2D');
    writeBundleDir('archive/medicine/phi-export/01JD3Q8Z5V7N4M2K6H8G0F1E2E');
    const r = run(root, '--keys', jwksFile);
    expect(r.code).toBe(0);
    expect(r.out.match(/RESULT: VERIFIED/g)).toHaveLength(2);
  });

  it('answers usage errors with exit 2', () => {
    expect(run().code).toBe(2);
    expect(run('--bogus', 'x').code).toBe(2);
    expect(run(path.join(work, 'nope')).code).toBe(2);
    const badKeys = path.join(work, 'bad-keys.json');
    writeFileSync(badKeys, '{"keys":[{"kty":"RSA"}]}');
    expect(run(writeBundleDir('prod3'), '--keys', badKeys).code).toBe(2);
  });
});

describe('svc-verify command line', () => {
  it('--help and --version answer on stdout with exit 0', () => {
    const help = run('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^usage: svc-verify/);
    const version = run('-v');
    expect(version.code).toBe(0);
    expect(version.out).toMatch(/^svc-verify \d+\.\d+\.\d+\n$/);
  });

  it('answers an unreachable --keys URL with one line naming the URL and exit 2, never a stack trace', async () => {
    const port = await closedLoopbackPort();
    const r = run(writeBundleDir('unreachable'), '--keys', `http://127.0.0.1:${port}/.well-known/service-keys.json`);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`svc-verify: keys: could not reach http://127.0.0.1:${port}/.well-known/service-keys.json: connection refused\n`);
    expect(r.out).toBe('');

    const j = run(writeBundleDir('unreachable-json'), '--keys', `http://127.0.0.1:${port}/keys.json`, '--json');
    expect(j.code).toBe(2);
    expect(JSON.parse(j.out)).toEqual({ error: { kind: 'input', message: `keys: could not reach http://127.0.0.1:${port}/keys.json: connection refused` } });
  });

  it('answers usage errors in JSON when --json is given', () => {
    const r = run('--json', '--bogus');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out).error).toMatchObject({ kind: 'usage', message: expect.stringContaining('--bogus') });
  });

  it('shows checks that could not run as SKIP, not FAIL', () => {
    // Signed by a key the default (sandbox-only) key set does not hold: the signature cannot be checked.
    const r = run(writeBundleDir('skip'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/SKIP\s+signature\s+not checked/);
    expect(r.out).toMatch(/FAIL\s+key_identity/);
    expect(r.out).toContain('RESULT: NOT VERIFIED (2 checks failed)');
  });
});

describe('svc-verify on an error answer saved to a file', () => {
  it('says it is an error answer with its status and code, not a sealed record whose canonical form failed: exit 2', async () => {
    // Real answers of the companion: a record that does not exist, an export without a key.
    const ctx = await createTestContext();
    let notFound: string;
    let unauthorized: string;
    try {
      const key = ctx.productionTenant().apiKey;
      const missing = await ctx.request('/v1/records/law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D', { key });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toBe('application/problem+json');
      notFound = missing.text;
      unauthorized = (await ctx.request('/tenant/exports/records')).text;
    } finally {
      await ctx.close();
    }

    const file = path.join(work, 'not-found.json');
    writeFileSync(file, notFound);
    const r = run(file);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^svc-verify: ${file}: this is an error answer \\(problem\\+json 404 not_found\\), not a sealed record`));
    expect(r.err).not.toMatch(/canonical_form/);
    expect(r.out).toBe('');
    // What `npm run verify` runs: the package bin, plain node on the build in dist/.
    const bin = spawnSync(process.execPath, ['companion/cli/svc-verify.mjs', file], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(bin.status).toBe(2);
    expect(bin.stderr).toBe(r.err);
    const j = run(file, '--json');
    expect(j.code).toBe(2);
    expect(JSON.parse(j.out).error).toMatchObject({ kind: 'input', message: expect.stringContaining('this is an error answer (problem+json 404 not_found)') });

    // Saved where a records export was expected (curl without --fail): refused as a whole.
    const ndjson = path.join(work, 'unauthorized.ndjson');
    writeFileSync(ndjson, unauthorized);
    const e = run(ndjson);
    expect(e.code).toBe(2);
    expect(e.err).toMatch(/this is an error answer \(problem\+json 401 unauthorized\), not a sealed record/);
    expect(e.out).toBe('');
  });
});
