/**
 * The identity provider's fetch (companion/sign-in/oidc-fetch.ts): openid-client's requests to a
 * tenant-supplied issuer meet the guarded outbound client's address rules. Refusals are tested
 * on the address check itself: a name pinned to a non-public address, IP literals, plain http
 * off loopback. Every client is sealed off the network by `beforeConnect` (it records and
 * refuses any socket to a non-loopback address), so a regression of the checks fails here
 * instead of sending a packet anywhere.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createGuardedFetch, IdentityProviderUnreachable } from '../../companion/sign-in/oidc-fetch.ts';
import { listenLoopback } from '../helpers/loopback-server.ts';
import type { LoopbackServer } from '../helpers/loopback-server.ts';

const offMachine: string[] = [];
const servers: LoopbackServer[] = [];
const clients: { close(): Promise<void> }[] = [];

function sealed(address: string): void {
  if (address === '127.0.0.1' || address === '::1') return;
  offMachine.push(address);
  throw Object.assign(new Error(`test seal: no connection to ${address}`), { code: 'ETESTSEAL' });
}

afterEach(async () => {
  expect(offMachine.splice(0), 'connections attempted off the machine').toEqual([]);
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) await s.close();
});

function client(options: { allowLoopback?: boolean; pinned?: Record<string, string> } = {}) {
  const fetch = createGuardedFetch({
    allowLoopback: options.allowLoopback ?? false,
    beforeConnect: sealed,
    resolve: async (host) => {
      const address = options.pinned?.[host];
      if (address === undefined) throw Object.assign(new Error(`no pinned answer for ${host}`), { code: 'ENOTFOUND' });
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    },
  });
  clients.push(fetch);
  return fetch;
}

async function provider(handle: Parameters<typeof listenLoopback>[0]): Promise<string> {
  const s = await listenLoopback(handle);
  servers.push(s);
  return s.origin;
}

describe('an identity provider is reached only at an allowed address', () => {
  it.each([
    ['a name that resolves to a private address', 'https://idp.corp.example/.well-known/openid-configuration', { 'idp.corp.example': '10.0.0.5' }],
    ['a name that resolves to the metadata address', 'https://idp.corp.example/.well-known/openid-configuration', { 'idp.corp.example': '169.254.169.254' }],
    ['a name that resolves to loopback while loopback is not allowed', 'https://idp.corp.example/.well-known/openid-configuration', { 'idp.corp.example': '127.0.0.1' }],
    ['a private IP literal', 'https://10.1.2.3/.well-known/openid-configuration', {}],
    ['plain http to a name', 'http://idp.corp.example/.well-known/openid-configuration', { 'idp.corp.example': '127.0.0.1' }],
    ['credentials in the URL', 'https://user:pw@idp.corp.example/', { 'idp.corp.example': '127.0.0.1' }],
  ])('refuses %s, before any connection', async (_name, url, pinned) => {
    const fetch = client({ pinned });
    const refused = await fetch(url, {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(IdentityProviderUnreachable);
    expect((refused as Error).message).toMatch(/^the identity provider's address is not allowed: (address_not_allowed|scheme_not_allowed|credentials_in_url)$/);
  });

  it('reads a loopback provider when the operator allows loopback: status, headers and body as sent, redirects not followed', async () => {
    const origin = await provider((req, raw, res) => {
      if (req.url === '/moved') return res.writeHead(302, { location: 'http://169.254.169.254/latest' }).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify({ method: req.method, body: raw.toString('utf8'), auth: req.headers.authorization ?? null }));
    });
    const fetch = client({ allowLoopback: true });
    const got = await fetch(`${origin}/token`, { method: 'POST', headers: { authorization: 'Basic abc', 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code' }) });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/json');
    expect(got.headers.get('cache-control')).toBe('max-age=60');
    expect(await got.json()).toEqual({ method: 'POST', body: 'grant_type=authorization_code', auth: 'Basic abc' });

    const moved = await fetch(`${origin}/moved`, {});
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('http://169.254.169.254/latest');
  });

  it('refuses an answer longer than a discovery document or key set can be', async () => {
    const origin = await provider((_req, _raw, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(300 * 1024)}"`));
    const fetch = client({ allowLoopback: true });
    await expect(fetch(`${origin}/.well-known/openid-configuration`, {})).rejects.toThrow('the identity provider answered more than this service reads');
  });

  it('refuses methods openid-client never sends', async () => {
    const fetch = client({ allowLoopback: true });
    await expect(fetch('http://127.0.0.1:9/', { method: 'DELETE' })).rejects.toBeInstanceOf(IdentityProviderUnreachable);
  });
});
