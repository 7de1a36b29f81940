/**
 * The admin export and the offline check of its file, as an operator and an auditor run them:
 * a real companion process on loopback, the export CLI as a process writing a real file, and
 * svc-verify reading that file with no companion involved.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { recordBody } from '../companion/pack-fixtures.ts';
import { closedLoopbackPort } from './closed-port.ts';

const work = mkdtempSync(path.join(tmpdir(), 'svc-export-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
afterEach(() => cleanupCompanions());

/** Runs a CLI as its own process (async: the companion in this test process must keep serving). */
function run(script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, script), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

async function seeded(): Promise<{ url: string; key: string; keys: string[] }> {
  const companion = await start(tempDataDir());
  const signup = await fetch(`${companion.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'auditor@example.com' }) });
  const key = ((await signup.json()) as { api_key: string }).api_key;
  const keys: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${companion.url}/v1/record/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify(Array.from({ length: 20 }, () => recordBody())),
    });
    expect(res.status).toBe(201);
    keys.push(...((await res.json()) as { results: { action_key: string }[] }).results.map((r) => r.action_key));
  }
  return { url: companion.url, key, keys };
}

// Each test starts a companion and several CLI processes; a loaded 2-core machine needs minutes.
describe('npm run export -- records, then svc-verify on the file', { timeout: 180_000 }, () => {
  it('exports every record to NDJSON with a final count, and every exported record verifies offline', async () => {
    const { url, key, keys } = await seeded();
    const out = path.join(work, 'records.ndjson');
    const exported = await run('companion/cli/export.ts', ['records', '--from', '2020-01-01T00:00:00Z', '--out', out, '--url', url], { SVC_API_KEY: key });
    expect(exported.err).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.out).toMatch(new RegExp(`exported 40 records in 2 pages to ${out}`));
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).action_key)).toEqual(keys);

    const verified = await run('companion/cli/verify.ts', [out]);
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(/40 records: 40 verified, 0 failed \(0 production-key, 40 sandbox dev-key\)/);
    expect(verified.out).toMatch(/RESULT: VERIFIED; sandbox records are never production evidence/);

    // A forged record and a reordered file both fail, each named by line.
    const forged = lines.map((l, i) => (i === 4 ? l.replace(/"payload_hash":"[0-9a-f]{64}"/g, `"payload_hash":"${'0'.repeat(64)}"`) : l));
    const forgedFile = path.join(work, 'forged.ndjson');
    writeFileSync(forgedFile, `${forged.join('\n')}\n`);
    const bad = await run('companion/cli/verify.ts', [forgedFile, '--json']);
    expect(bad.code).toBe(1);
    const summary = JSON.parse(bad.out);
    expect(summary).toMatchObject({ records: 40, verified: 39, failed: 1 });
    expect(summary.failures[0]).toMatchObject({ line: 5, action_key: keys[4] });
    expect(summary.failures[0].failed_checks).toContain('packet_hash');

    const swapped = [...lines];
    [swapped[10], swapped[11]] = [swapped[11]!, swapped[10]!];
    const swappedFile = path.join(work, 'swapped.ndjson');
    writeFileSync(swappedFile, `${swapped.join('\n')}\n`);
    const reordered = await run('companion/cli/verify.ts', [swappedFile]);
    expect(reordered.code).toBe(1);
    expect(reordered.out).toMatch(/FAIL {2}line 12 .* export_order/);
  });

  it('exports only the half-open range asked for from the companion in SVC_URL, and refuses bad usage without writing a file', async () => {
    const { url, key } = await seeded();
    const out = path.join(work, 'empty.ndjson');
    // The companion from SVC_URL, as every CLI takes it when --url is not given.
    const none = await run('companion/cli/export.ts', ['records', '--from', '2000-01-01T00:00:00Z', '--to', '2000-01-02T00:00:00Z', '--out', out], { SVC_API_KEY: key, SVC_URL: url });
    expect(none.err).toBe('');
    expect(none.code).toBe(0);
    expect(none.out).toMatch(/exported 0 records in 1 pages/);
    expect(readFileSync(out, 'utf8')).toBe('');

    const refused = path.join(work, 'refused.ndjson');
    const badRange = await run('companion/cli/export.ts', ['records', '--from', 'yesterday', '--out', refused, '--url', url], { SVC_API_KEY: key });
    expect(badRange.code).toBe(1);
    expect(badRange.err).toMatch(/422/);
    expect(existsSync(refused)).toBe(false);

    const noKey = await run('companion/cli/export.ts', ['records', '--out', refused, '--url', url], { SVC_API_KEY: '' });
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/SVC_API_KEY/);

    // A refusal names the URL and the problem's code and failing field, not a raw body.
    expect(badRange.err).toContain(`export: ${url}/tenant/exports/records answered 422 validation_failed`);
    expect(badRange.err).toContain('/from');
  });
});

describe('npm run export when the companion cannot be reached', { timeout: 60_000 }, () => {
  it('names the URL it could not reach and why, in one line, exit 1, and writes no file', async () => {
    const port = await closedLoopbackPort();
    const out = path.join(work, 'unreachable.ndjson');
    for (const [args, env] of [
      [['--url', `http://127.0.0.1:${port}`], {}],
      [[], { SVC_URL: `http://127.0.0.1:${port}/` }],
    ] as const) {
      const r = await run('companion/cli/export.ts', ['records', '--out', out, '--from', '2025-01-01T00:00:00Z', ...args], { SVC_API_KEY: 'svc_test_x', ...env });
      expect(r.code).toBe(1);
      expect(r.err).toBe(`export: could not reach http://127.0.0.1:${port}/tenant/exports/records: connection refused\n`);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('names the URL when the connection is cut during a page, and leaves no file', async () => {
    // A loopback stand-in that starts an NDJSON page, then drops the connection mid-stream.
    const http = await import('node:http');
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"partial":');
      setImmediate(() => res.socket?.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const out = path.join(work, 'cut.ndjson');
      const r = await run('companion/cli/export.ts', ['records', '--out', out, '--url', base], { SVC_API_KEY: 'svc_test_x' });
      expect(r.code).toBe(1);
      expect(r.err).toBe(`export: lost the connection to ${base}/tenant/exports/records during page 1: connection closed\n`);
      expect(existsSync(out)).toBe(false);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a base URL that is not http(s) as a usage error naming the setting', async () => {
    const out = path.join(work, 'bad-url.ndjson');
    const flag = await run('companion/cli/export.ts', ['records', '--out', out, '--url', 'ftp://127.0.0.1'], { SVC_API_KEY: 'svc_test_x' });
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/^export: --url: expected an http or https URL/);
    const env = await run('companion/cli/export.ts', ['records', '--out', out], { SVC_API_KEY: 'svc_test_x', SVC_URL: 'not a url' });
    expect(env.code).toBe(2);
    expect(env.err).toMatch(/^export: SVC_URL: expected the companion's base URL/);
  });
});
