/**
 * The README's copy-paste verification examples (Node, Python, openssl) are run exactly as
 * written against a delivery signed the way the worker signs it, and must reject a tampered
 * body: documentation that stops working fails the build.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEventHeaders, deriveWebhookKey, newEventId, newSigningSecret } from '../../shared/webhook-signature.ts';
import { REPO_ROOT } from '../helpers/vectors.ts';
import { makeTempDir } from './helpers.ts';

const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const dir = makeTempDir('svc-readme-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function example(name: string): string {
  const m = new RegExp(`<!-- webhook-example:${name} -->\\n\`\`\`[a-z]+\\n([\\s\\S]*?)\`\`\``).exec(readme);
  if (!m) throw new Error(`README has no webhook-example:${name} block`);
  return m[1]!;
}

const secret = newSigningSecret();
const body = JSON.stringify({ event: 'record.sealed', tenant: 'ten_1', created_at: new Date().toISOString(), action_key: 'law:proposed-action:1' });
const signed = buildEventHeaders({ key: deriveWebhookKey(secret), event: 'record.sealed', id: newEventId(), timestamp: Math.floor(Date.now() / 1000), body });
const headers = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
const tampered = body.replace('ten_1', 'ten_2');

describe('README webhook verification examples', () => {
  it('Node', async () => {
    const file = path.join(dir, 'verify.mjs');
    fs.writeFileSync(file, example('node'));
    const { verifyActionGateWebhook } = await import(pathToFileURL(file).href);
    expect(verifyActionGateWebhook(secret, headers, Buffer.from(body))).toBe(true);
    expect(verifyActionGateWebhook(secret, headers, Buffer.from(tampered))).toBe(false);
    expect(verifyActionGateWebhook(newSigningSecret(), headers, Buffer.from(body))).toBe(false);
  });

  it('Python', () => {
    // One interpreter for both bodies: Python's start-up is the slow part.
    const script = `${example('python')}\nimport json, sys\nh = json.loads(sys.argv[2])\nprint(verify_action_gate_webhook(sys.argv[1], h, sys.argv[3].encode()), verify_action_gate_webhook(sys.argv[1], h, sys.argv[4].encode()))`;
    const out = execFileSync('python3', ['-c', script, secret, JSON.stringify(headers), body, tampered], { encoding: 'utf8' }).trim();
    expect(out).toBe('True False');
  });

  it('openssl', () => {
    const run = (raw: string) => {
      fs.writeFileSync(path.join(dir, 'body.json'), raw);
      return execFileSync('bash', ['-c', example('openssl')], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, SECRET: secret, T: headers['x-service-timestamp'], ID: headers['x-service-id'] },
      }).trim();
    };
    const v1 = /v1=([0-9a-f]{64})/.exec(headers['x-service-signature']!)![1];
    expect(run(body)).toBe(v1);
    expect(run(tampered)).not.toBe(v1);
  });
});
