/**
 * The real entry point over real HTTP on loopback: `node --import tsx companion/main.ts` with
 * PORT=0 and a temporary SVC_DATA_DIR, as `npm start` runs it.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PRODUCTION_KEY_FILE } from '../../companion/core/signer.ts';
import { cleanupCompanions, holdInFlightSignup, launch, start, tempDataDir } from '../helpers/companion-process.ts';

afterEach(cleanupCompanions);

async function jwksProductionKid(url: string): Promise<string> {
  const res = await fetch(`${url}/.well-known/service-keys.json`);
  const body = (await res.json()) as { keys: { kid: string; status: string }[] };
  return body.keys.find((k) => k.status === 'active')!.kid;
}

describe('companion over HTTP', () => {
  it('serves the API on 127.0.0.1 with problem+json errors', async () => {
    const dataDir = tempDataDir();
    const svc = await start(dataDir);

    const signup = await fetch(`${svc.url}/signup/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'http@example.com' }),
    });
    expect(signup.status).toBe(201);
    const { api_key: apiKey } = (await signup.json()) as { api_key: string };

    const keys = await fetch(`${svc.url}/tenant/api-keys`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(keys.status).toBe(200);

    const missing = await fetch(`${svc.url}/v0/nothing`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');

    const tooBig = await fetch(`${svc.url}/signup/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { code: string }).code).toBe('payload_too_large');

    // Not even HTTP: Node's parser rejects it before the app runs; still problem+json.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(raw).toMatch(/content-type: application\/problem\+json/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, code: 'bad_request' });

    svc.child.kill('SIGTERM');
    expect(await svc.exited).toEqual({ code: 0, signal: null });
  });

  it('shuts down on SIGTERM: refuses new connections, finishes the in-flight request, closes the database, exits 0', async () => {
    const dataDir = tempDataDir();
    const svc = await start(dataDir);
    const { port } = new URL(svc.url);
    const held = await holdInFlightSignup(Number(port), 'inflight@example.com');

    svc.child.kill('SIGTERM');
    await svc.waitForLog(/"message":"shutting down"/);
    await expect(fetch(`${svc.url}/openapi.json`)).rejects.toThrow();

    const done = await held.finish();
    expect(done.status).toBe(201);
    expect(JSON.parse(done.text).api_key).toMatch(/^svc_test_/);

    expect(await svc.exited).toEqual({ code: 0, signal: null });
    expect(svc.stdout()).toMatch(/"message":"stopped"/);
    // A cleanly closed WAL database checkpoints and removes its -wal and -shm files.
    expect(fs.readdirSync(dataDir).filter((f) => f.startsWith('companion.db')).sort()).toEqual(['companion.db']);
    const db = new Database(path.join(dataDir, 'companion.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT count(*) AS n FROM tenants').get()).toEqual({ n: 1 });
    } finally {
      db.close();
    }
  });

  it('keeps its production key across restarts', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    const kid = await jwksProductionKid(first.url);
    first.child.kill('SIGINT');
    expect((await first.exited).code).toBe(0);
    expect(fs.statSync(path.join(dataDir, PRODUCTION_KEY_FILE)).mode & 0o777).toBe(0o600);

    const second = await start(dataDir);
    expect(await jwksProductionKid(second.url)).toBe(kid);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });

  it('refuses to start with a world-readable production key', async () => {
    const dataDir = tempDataDir();
    const first = await start(dataDir);
    first.child.kill('SIGTERM');
    await first.exited;
    fs.chmodSync(path.join(dataDir, PRODUCTION_KEY_FILE), 0o644);

    const p = launch(dataDir);
    expect((await p.exited).code).toBe(1);
    expect(p.stderr()).toMatch(/refusing to use production signing key .* mode 0644 .*chmod 600/);
    expect(p.stdout()).not.toMatch(/listening/);
  });

  it('fails fast on invalid configuration', async () => {
    const p = launch(tempDataDir(), { PORT: 'eighty', SVC_EPOCH_SECONDS: '-1' });
    expect((await p.exited).code).toBe(2);
    expect(p.stderr()).toMatch(/PORT must be an integer/);
    expect(p.stderr()).toMatch(/SVC_EPOCH_SECONDS must be an integer/);
  });
});
