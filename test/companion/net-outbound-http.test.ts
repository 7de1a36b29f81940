/**
 * The guarded client against loopback receivers only (SVC_WEBHOOK_ALLOW_LOOPBACK semantics);
 * refusals of names that resolve to non-public addresses use a pinned resolver, so the refused
 * connection is never attempted.
 *
 * Every client here is sealed off the network: its `beforeConnect` hook refuses (and records)
 * any socket about to connect to an address that is not loopback. Should the address checks
 * regress, the test fails on the recorded attempt instead of sending a packet off the machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundError, createOutboundHttp } from '../../companion/net/outbound-http.ts';
import type { OutboundHttp } from '../../companion/net/outbound-http.ts';
import { makeTempDir } from './helpers.ts';

const servers: (http.Server | https.Server)[] = [];
const clients: OutboundHttp[] = [];
/** Addresses a client tried to connect to that are not loopback (each refused by the seal). */
const offMachine: string[] = [];

function sealed(address: string): void {
  if (address === '127.0.0.1' || address === '::1') return;
  offMachine.push(address);
  throw Object.assign(new Error(`test seal: no connection to ${address}`), { code: 'ETESTSEAL' });
}

afterEach(async () => {
  expect(offMachine.splice(0), 'connections attempted off the machine').toEqual([]);
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function receiver(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function client(options: Parameters<typeof createOutboundHttp>[0]): OutboundHttp {
  const c = createOutboundHttp({ ...options, beforeConnect: sealed });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<OutboundError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundError);
  return err as OutboundError;
}

describe('createOutboundHttp', () => {
  it('posts the exact bytes and headers and returns the status', async () => {
    let seen: { body: string; headers: http.IncomingHttpHeaders } | undefined;
    const url = await receiver((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen = { body, headers: req.headers };
        res.writeHead(204).end();
      });
    });
    const out = await client({ allowLoopback: true }).post({ url: `${url}/hook`, headers: { 'content-type': 'application/json', 'x-test': '1' }, body: '{"a": 1}' });
    expect(out.status).toBe(204);
    expect(seen?.body).toBe('{"a": 1}');
    expect(seen?.headers['x-test']).toBe('1');
  });

  it('does not follow redirects', async () => {
    let hits = 0;
    const url = await receiver((_req, res) => {
      hits++;
      res.writeHead(307, { location: '/elsewhere' }).end();
    });
    const out = await client({ allowLoopback: true }).post({ url: `${url}/hook`, headers: {}, body: 'x' });
    expect(out.status).toBe(307);
    expect(hits).toBe(1);
  });

  it('reads at most maxResponseBytes of the answer', async () => {
    const url = await receiver((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(200_000, 0x61));
    });
    const out = await client({ allowLoopback: true, maxResponseBytes: 1024 }).post({ url, headers: {}, body: 'x' });
    expect(out.status).toBe(200);
    expect(out.body.length).toBe(1024);
  });

  it('times out a receiver that never answers', async () => {
    const url = await receiver(() => {
      /* never answers */
    });
    const err = await failure(client({ allowLoopback: true, readTimeoutMs: 200 }).post({ url, headers: {}, body: 'x' }));
    expect(err.code).toBe('timeout');
  });

  it('cuts a request off when the caller aborts, and never sends one aborted before it started', async () => {
    let hits = 0;
    const url = await receiver(() => {
      hits++; // answers nothing: the abort has to end it
    });
    const out = client({ allowLoopback: true });
    const inFlight = new AbortController();
    const pending = failure(out.post({ url, headers: {}, body: 'x', signal: inFlight.signal }));
    await expect.poll(() => hits).toBe(1);
    inFlight.abort();
    expect((await pending).code).toBe('timeout');

    const before = new AbortController();
    before.abort();
    expect((await failure(out.post({ url, headers: {}, body: 'x', signal: before.signal }))).code).toBe('timeout');
    expect(hits).toBe(1);
  });

  it('answers with the final status after informational ones, and the whole short body', async () => {
    const url = await receiver((_req, res) => {
      res.writeProcessing(); // 102 (RFC 2518), then the final answer
      res.writeHead(202).end('accepted');
    });
    const out = await client({ allowLoopback: true }).post({ url, headers: {}, body: 'x' });
    expect(out.status).toBe(202);
    expect(Buffer.from(out.body).toString()).toBe('accepted');
  });

  it('refuses loopback receivers without the operator setting, before connecting', async () => {
    let hits = 0;
    const url = await receiver((_req, res) => (hits++, res.end()));
    const err = await failure(client({ allowLoopback: false }).post({ url, headers: {}, body: 'x' }));
    expect(err.code).toBe('scheme_not_allowed');
    expect(hits).toBe(0);
  });

  it('checks what a name resolves to at connect time, refusing any non-public answer', async () => {
    const calls: string[] = [];
    const pinned = (answers: string[]) => async (hostname: string) => {
      calls.push(hostname);
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    for (const answers of [['10.0.0.7'], ['93.184.216.34', '169.254.169.254'], ['::ffff:127.0.0.1'], ['fd00::1']]) {
      const err = await failure(client({ allowLoopback: false, resolve: pinned(answers) }).post({ url: 'https://hooks.example.com/in', headers: {}, body: 'x' }));
      expect(err.code, answers.join()).toBe('address_not_allowed');
    }
    expect(calls).toEqual(['hooks.example.com', 'hooks.example.com', 'hooks.example.com', 'hooks.example.com']);
    expect(offMachine).toEqual([]);
  });

  it('refuses a private IP-literal target before any connection', async () => {
    for (const url of ['https://10.0.0.7/in', 'https://169.254.169.254/latest', 'https://[fd00::1]/in']) {
      const err = await failure(client({ allowLoopback: false }).post({ url, headers: {}, body: 'x' }));
      expect(err.code, url).toBe('address_not_allowed');
    }
    expect(offMachine).toEqual([]);
  });

  it('passes every address it is about to connect to through beforeConnect, IP literals and resolved names alike', async () => {
    const seen: string[] = [];
    const url = await receiver((_req, res) => res.writeHead(204).end());
    const port = new URL(url).port;
    const watched = createOutboundHttp({ allowLoopback: true, beforeConnect: (a) => (seen.push(a), sealed(a)), resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    clients.push(watched);
    expect((await watched.post({ url: `http://127.0.0.1:${port}/a`, headers: {}, body: 'x' })).status).toBe(204);
    // A name is https only; the plain-http receiver fails the handshake, after the connect.
    await failure(watched.post({ url: `https://receiver.test:${port}/b`, headers: {}, body: 'x' }));
    expect(seen).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('verifies TLS certificates and connects a name to its checked answer', async () => {
    const dir = makeTempDir('svc-tls-');
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
      let hits = 0;
      const server = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (_req, res) => (hits++, res.end()));
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      const err = await failure(client({ allowLoopback: true }).post({ url: `https://127.0.0.1:${port}/hook`, headers: {}, body: 'x' }));
      expect(err.code).toBe('tls_failed');
      // A name is connected to the address its checked lookup answered: the TLS handshake with
      // this receiver is what fails, so the connection reached exactly that address.
      const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
      const named = await failure(client({ allowLoopback: true, resolve }).post({ url: `https://receiver.test:${port}/hook`, headers: {}, body: 'x' }));
      expect(named.code).toBe('tls_failed');
      expect(hits).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
