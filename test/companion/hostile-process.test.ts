/**
 * Hostile input against the real process over loopback: the node adapter's own rejections
 * (a backslash in the path, a bad Host, a malformed request line) answer problem+json with a
 * request id, and nothing the requests carried reaches the process's stdout or stderr.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupCompanions, launch, tempDataDir } from '../helpers/companion-process.ts';

afterEach(cleanupCompanions);

const CANARY = 'CANARY-proc-4b2d';

async function startWithOutput() {
  const p = launch(tempDataDir());
  const listening = /listening on (http:\/\/127\.0\.0\.1:(\d+))/;
  const outcome = await Promise.race([p.waitFor(listening, p.stdout).then(() => 'ready' as const), p.exited]);
  if (outcome !== 'ready') throw new Error(`companion exited early: ${p.stderr()}`);
  const [, url, port] = listening.exec(p.stdout())!;
  return { ...p, url: url!, port: Number(port) };
}

/** One raw HTTP/1.1 exchange: what the server wrote back before closing or going idle. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    socket.setTimeout(2000, () => socket.end());
    socket.on('data', (d) => {
      out += d.toString('latin1');
      // A complete problem body ends the exchange; keep-alive would otherwise hold it open.
      if (/\r\n\r\n\{.*\}$/s.test(out)) socket.end();
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function parseResponse(raw: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = new Map(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine!.split(' ')[1]), headers, body };
}

describe('the node adapter rejections', () => {
  it.each([
    ['a backslash in the path', `GET /v1\\packs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`],
    ['a Host that is not a host', `GET /v1/packs HTTP/1.1\r\nHost: a b\r\n\r\n`],
    ['an unclosed IPv6 Host', `GET /v1/packs HTTP/1.1\r\nHost: [::1\r\n\r\n`],
    ['a malformed request line', `${CANARY}\r\n\r\n`],
    ['a header without a colon', `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n${CANARY}\r\n\r\n`],
  ])('answer %s with 400 problem+json and a request id', async (_label, request) => {
    const svc = await startWithOutput();
    const res = parseResponse(await rawExchange(svc.port, request));
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: 400, code: 'bad_request' });
    expect(body.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(res.headers.get('x-request-id')).toBe(body.request_id);
    expect(res.body).not.toContain(CANARY);
  });
});

describe('the process log', () => {
  it('holds none of the canaries hostile requests carried', async () => {
    const svc = await startWithOutput();
    const signup = await fetch(`${svc.url}/signup/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"canary@example.com"}' });
    const { api_key: key } = (await signup.json()) as { api_key: string };
    const json = { 'content-type': 'application/json', 'x-service-key': key };
    const gate = (action: string) => `{"pack":"law","proposed_action":"${action}","law_context":{"matter_band":"moderate","tool_id":"t","doctrine_anchor":"competence","jurisdiction":"US-NY"}}`;
    const bodies: BodyInit[] = [
      gate(`${CANARY} \\ud800`),
      gate(`${CANARY}`).replace('"pack":"law"', '"pack":"law","pack":"law"'),
      new Uint8Array([...new TextEncoder().encode(gate(`${CANARY} `)).slice(0, -120), 0xff, ...new TextEncoder().encode(gate('')).slice(-120)]),
      `{"proposed_action":${'['.repeat(5000)}"${CANARY}"${']'.repeat(5000)}}`,
      gate(`${CANARY} ${'x'.repeat(40_000)}`),
    ];
    for (const path of ['/v1/gate', '/law/proposed-action', '/v1/verify', '/law/grading-mirror/verify', '/v1/reviews']) {
      for (const body of bodies) {
        const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: json, body });
        expect(res.status, path).toBeGreaterThanOrEqual(400);
        expect(res.status, path).toBeLessThan(500);
        await res.arrayBuffer();
      }
    }
    const policy = await fetch(`${svc.url}/tenant/policy?policy_pack=law&${CANARY}=1`, { method: 'PUT', headers: json, body: JSON.stringify({ label: CANARY, [CANARY]: CANARY }) });
    expect(policy.status).toBe(422);
    await fetch(`${svc.url}/tenant/api-keys`, { headers: { 'x-service-key': `svc_test_${CANARY}`, authorization: `Basic ${CANARY}` } });

    svc.child.kill('SIGTERM');
    await svc.exited;
    expect(svc.stdout()).not.toContain(CANARY);
    expect(svc.stderr()).not.toContain(CANARY);
  }, 60_000);
});
