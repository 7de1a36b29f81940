/**
 * The HTTP client openid-client uses for an identity provider (its `customFetch`): the issuer is
 * a tenant-supplied URL, so every request meets the same address rules as webhook deliveries
 * (net/address-policy.ts, interface-spec Events rule 7): https only (http only to a loopback
 * literal under SVC_WEBHOOK_ALLOW_LOOPBACK), an IP-literal host must be public, and every address
 * a name resolves to is checked by the connector's own lookup, so the socket connects to exactly
 * the address checked (no DNS-rebinding window). Redirects are not followed, answers are capped.
 *
 * net/outbound-http.ts sends POSTs and hands back status and body only; discovery and the JWKS
 * are GETs and openid-client reads the answer's headers, so this client asks undici directly
 * with the same guards and hands openid-client a standard Response.
 */
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import type { Agent } from 'undici';
import { checkAddress, checkTargetUrl } from '../net/address-policy.ts';
import type { AddressRules } from '../net/address-policy.ts';

/** Discovery documents, JWKS and token answers are small; anything larger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;

export type GuardedFetch = (url: string, init: { method?: string; headers?: HeadersInit | Record<string, string>; body?: unknown; signal?: AbortSignal | null }) => Promise<Response>;

export class IdentityProviderUnreachable extends Error {}

export function createGuardedFetch(rules: AddressRules, resolve: (host: string) => Promise<LookupAddress[]> = (h) => dns.promises.lookup(h, { all: true, verbatim: true })): GuardedFetch & { close(): Promise<void> } {
  let agent: Promise<Agent> | undefined;
  const dispatcher = () =>
    (agent ??= import('undici').then(({ Agent }) => {
      const lookup = (hostname: string, opts: { all?: boolean }, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
        resolve(hostname).then(
          (addresses) => {
            const refused = addresses.length === 0 ? 'no addresses' : addresses.map((a) => checkAddress(a.address, rules)).find((v) => !v.ok);
            if (refused) return callback(Object.assign(new Error(`${hostname} is not allowed`), { code: 'ESVCADDRESS' }), []);
            if (opts.all) callback(null, addresses);
            else callback(null, addresses[0]!.address, addresses[0]!.family);
          },
          (err: NodeJS.ErrnoException) => callback(err, []),
        );
      };
      return new Agent({ connect: { timeout: TIMEOUT_MS, lookup: lookup as never, rejectUnauthorized: true }, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
    }));

  const guarded: GuardedFetch = async (url, init) => {
    const target = checkTargetUrl(url, rules);
    if (!target.ok) throw new IdentityProviderUnreachable(`the identity provider's URL is not allowed: ${target.code}`);
    const { request } = await import('undici');
    const headers: Record<string, string> = {};
    new Headers(init.headers as HeadersInit).forEach((value, name) => (headers[name] = value));
    let res;
    try {
      res = await request(target.url, {
        method: (init.method ?? 'GET') as 'GET',
        headers,
        body: init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : (init.body as Uint8Array),
        dispatcher: await dispatcher(),
        signal: init.signal ?? AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new IdentityProviderUnreachable('the identity provider could not be reached', { cause: err });
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Uint8Array).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        throw new IdentityProviderUnreachable('the identity provider answered more than this service reads');
      }
      chunks.push(chunk as Uint8Array);
    }
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
    }
    const noBody = res.statusCode === 204 || res.statusCode === 304;
    return new Response(noBody ? null : Buffer.concat(chunks), { status: res.statusCode, headers: out });
  };
  return Object.assign(guarded, {
    async close() {
      if (agent) await (await agent).close();
    },
  });
}
