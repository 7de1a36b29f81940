/**
 * The newcomer's path from the README, over real HTTP on loopback against the real process:
 * sign up, gate an action, fetch the record and its packet, verify online and offline (our CLI,
 * trusting the companion's published keys), tenant isolation; then a hard kill (SIGKILL) right
 * after the answers and a restart: every answered seal is still there.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';

afterEach(cleanupCompanions);

const LAW_GATE = {
  pack: 'law',
  proposed_action: 'File the motion to compel in matter 42',
  law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
};

async function call(url: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(url, {
    method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
    headers: { ...(init.json === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('the README flow over HTTP', () => {
  it('signs up, gates, fetches, isolates tenants and verifies online and offline', async () => {
    const dataDir = tempDataDir();
    const svc = await start(dataDir);
    const signup = await call(`${svc.url}/signup/checkout`, { json: { email: 'newcomer@example.com' } });
    expect(signup.status).toBe(201);
    const key: string = signup.body.api_key;

    // interface-spec Authentication 1: Authorization: Bearer and X-Service-Key both work.
    const gated = await call(`${svc.url}/v1/gate`, { json: LAW_GATE, headers: { authorization: `Bearer ${key}` } });
    expect(gated.status).toBe(201);
    expect(gated.body.decision).toBe('needs_review');
    const actionKey: string = gated.body.action_key;

    const record = await call(`${svc.url}/v1/records/${actionKey}`, { headers: { 'x-service-key': key } });
    expect(record.status).toBe(200);
    const packet = await call(`${svc.url}${gated.body.evidence_packet.href}`, { headers: { 'x-service-key': key } });
    expect(packet.body).toEqual(gated.body.evidence_packet);

    const other = await call(`${svc.url}/signup/checkout`, { json: { email: 'someone-else@example.com' } });
    const foreign = await call(`${svc.url}/v1/records/${actionKey}`, { headers: { 'x-service-key': other.body.api_key } });
    expect(foreign.status).toBe(404);
    expect((await call(`${svc.url}/v1/records/${actionKey}`)).status).toBe(401);

    const online = await call(`${svc.url}/v1/verify`, { json: gated.body.verify_request });
    expect(online.body).toMatchObject({ verified: true, key_status: 'sandbox' });

    // Offline: the CLI reads the saved response and trusts the companion's published keys.
    const file = path.join(dataDir, 'gate-response.json');
    fs.writeFileSync(file, JSON.stringify(gated.body));
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'companion/cli/verify.ts', file, '--keys', `${svc.url}/.well-known/service-keys.json`], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain('RESULT: VERIFIED as SANDBOX evidence');
  });

  it('keeps every answered seal through a hard kill and restart', async () => {
    const dataDir = tempDataDir();
    const svc = await start(dataDir);
    const { body } = await call(`${svc.url}/signup/checkout`, { json: { email: 'durable@example.com' } });
    const headers = { 'x-service-key': body.api_key };
    const answered = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(`${svc.url}/v1/gate`, { json: { ...LAW_GATE, source_key: `conv-${i}` }, headers })),
    );
    expect(answered.every((a) => a.status === 201)).toBe(true);
    svc.child.kill('SIGKILL');
    await svc.exited;

    const again = await start(dataDir);
    for (const a of answered) {
      const rec = await call(`${again.url}/v1/records/${a.body.action_key}`, { headers });
      expect(rec.status).toBe(200);
      expect(rec.body.evidence_packet).toEqual(a.body.evidence_packet);
    }
    const usage = await call(`${again.url}/tenant/usage`, { headers });
    expect(usage.body.actions_used).toBe(30);
  });
});
