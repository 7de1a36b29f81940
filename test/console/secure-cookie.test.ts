/**
 * The session cookie in a real browser behind a TLS-terminating proxy on loopback, the
 * documented production shape (the service on 127.0.0.1, SVC_TRUST_PROXY naming the proxy):
 * signed in over https, Chromium stores the cookie as Secure (RFC 6265bis §4.1.2.5) and sends
 * it back over https. The proxy's certificate is
 * self-signed, made with openssl here; Chromium is told to accept it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer } from '../../companion/core/server.ts';
import type { RunningServer } from '../../companion/core/server.ts';
import { createTestContext } from '../companion/helpers.ts';
import type { TestContext } from '../companion/helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Headless and off the network: every host name but 127.0.0.1 fails to resolve. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  '--ignore-certificate-errors',
];

let dir: string;
let ctx: TestContext;
let service: RunningServer;
let proxy: https.Server;
let proxyUrl: string;
let apiKey: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-tls-proxy-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  ctx = await createTestContext({ env: { HOST: '127.0.0.1', SVC_TRUST_PROXY: '127.0.0.1' } });
  ({ apiKey } = await ctx.signup());
  service = await startServer(ctx.app, { host: '127.0.0.1', port: 0, graceMs: 500, log: ctx.log });
  // The proxy: TLS ends here; the request goes on to the service over loopback http with
  // X-Forwarded-Proto and X-Forwarded-For, as a TLS-terminating proxy sends them.
  proxy = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: service.port, method: req.method, path: req.url, headers: { ...req.headers, 'x-forwarded-proto': 'https', 'x-forwarded-for': req.socket.remoteAddress ?? '' } },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await service?.close();
  await ctx?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('stores the session cookie as Secure over https and sends it back over https', async () => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${proxyUrl}/healthz`);
    const signedIn = await page.evaluate(async (key) => {
      const res = await fetch('/account/session', { method: 'POST', headers: { 'x-service-key': key } });
      return res.status;
    }, apiKey);
    expect(signedIn).toBe(201);

    const [cookie] = (await context.cookies()).filter((c) => c.name === 'svc_session');
    expect(cookie).toMatchObject({ domain: '127.0.0.1', secure: true, httpOnly: true, sameSite: 'Strict' });

    // Sent back over https: the session answers.
    expect(await page.evaluate(async () => (await fetch('/account/me')).status)).toBe(200);
    // (Whether it would go over plain http cannot be seen here: Chromium counts http://127.0.0.1
    // as a secure context and sends Secure cookies to it, RFC 6265bis §5.8.3's loopback allowance.)
  } finally {
    await browser.close();
  }
});
