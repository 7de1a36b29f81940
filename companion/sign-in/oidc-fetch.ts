/**
 * The fetch openid-client calls for an identity provider (its `customFetch`), over the one
 * guarded outbound client (net/outbound-http.ts): the issuer is a tenant-supplied URL, so
 * discovery, the JWKS and the token request meet the same address rules as webhook deliveries
 * (interface-spec Events rule 7): https only (http only to a loopback literal under
 * SVC_WEBHOOK_ALLOW_LOOPBACK), an IP-literal host must be public, and every address a name
 * resolves to is checked by the connector's own lookup, so the socket connects to exactly the
 * address checked (no DNS-rebinding window). Redirects are not followed; answers are capped.
 */
import { createOutboundHttp, OutboundError } from '../net/outbound-http.ts';
import type { OutboundHttpOptions } from '../net/outbound-http.ts';

/** Discovery documents, JWKS and token answers are small; anything larger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;

export type GuardedFetch = (url: string, init: { method?: string; headers?: HeadersInit | Record<string, string>; body?: unknown; signal?: AbortSignal | null }) => Promise<Response>;

export class IdentityProviderUnreachable extends Error {}

export function createGuardedFetch(options: OutboundHttpOptions): GuardedFetch & { close(): Promise<void> } {
  const http = createOutboundHttp({ connectTimeoutMs: TIMEOUT_MS, readTimeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_RESPONSE_BYTES, ...options });

  const guarded: GuardedFetch = async (url, init) => {
    const method = (init.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST') throw new IdentityProviderUnreachable(`an identity provider is not sent ${method} requests`);
    const headers: Record<string, string> = {};
    new Headers(init.headers as HeadersInit).forEach((value, name) => (headers[name] = value));
    const body = init.body === undefined || init.body === null ? undefined : typeof init.body === 'string' ? init.body : init.body instanceof URLSearchParams ? init.body.toString() : (init.body as Uint8Array);
    let res;
    try {
      res = await http.send({ method, url, headers, ...(body !== undefined ? { body } : {}), signal: init.signal ?? AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      if (err instanceof OutboundError && (err.code === 'address_not_allowed' || err.code === 'scheme_not_allowed' || err.code === 'invalid_url' || err.code === 'credentials_in_url')) {
        throw new IdentityProviderUnreachable(`the identity provider's address is not allowed: ${err.code}`, { cause: err });
      }
      throw new IdentityProviderUnreachable('the identity provider could not be reached', { cause: err });
    }
    if (res.truncated) throw new IdentityProviderUnreachable('the identity provider answered more than this service reads');
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
    }
    const noBody = res.status === 204 || res.status === 304;
    return new Response(noBody ? null : res.body, { status: res.status, headers: out });
  };
  return Object.assign(guarded, { close: () => http.close() });
}
