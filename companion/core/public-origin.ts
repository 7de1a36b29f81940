/**
 * What the service believes about how a client reached it. The public origin is a setting
 * (SVC_PUBLIC_BASE_URL, or the listening address when unset), never a request header: Host,
 * X-Forwarded-Host, X-Forwarded-Proto and X-Forwarded-For are chosen by whoever sends them.
 * Only a peer named in SVC_TRUST_PROXY (the TLS-terminating proxy in front) is believed about
 * the client's scheme and address.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { Config } from './config.ts';

type OriginConfig = Pick<Config, 'host' | 'publicBaseUrl' | 'trustProxy'>;

/** RFC 1122 §3.2.1.3, RFC 4291 §2.5.3 and RFC 6761 §6.3: names and addresses of this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Whether clients may reach the service over plain http: only when the public origin is an
 * http origin on loopback and the service listens on loopback only (DESIGN.md §6, interface-spec
 * Events 7: only loopback may go without TLS). Anything else requires TLS, in front of the
 * service when it speaks plain http itself.
 */
export function plainLoopbackOrigin(config: OriginConfig): boolean {
  const base = new URL(config.publicBaseUrl);
  return base.protocol === 'http:' && isLoopbackHost(base.hostname) && isLoopbackHost(config.host);
}

/** The socket's remote address as Node reports it (undefined for in-process requests), IPv4-mapped IPv6 unwrapped. */
export function peerAddress(c: Context): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const address = incoming?.socket?.remoteAddress;
  return address?.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

function fromTrustedProxy(config: OriginConfig, c: Context): boolean {
  const peer = peerAddress(c);
  return peer !== undefined && config.trustProxy.includes(peer);
}

/**
 * The session cookie's Secure attribute (RFC 6265bis §4.1.2.5): set unless the origin is
 * plain-http loopback, and set there too when a trusted proxy says the client came over https
 * (X-Forwarded-Proto, the de facto form of RFC 7239's proto=).
 */
export function secureCookie(config: OriginConfig, c: Context): boolean {
  if (!plainLoopbackOrigin(config)) return true;
  if (!fromTrustedProxy(config, c)) return false;
  const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https';
}

/**
 * The client's address for per-client limits: the socket's peer, or, when that peer is a
 * trusted proxy, the nearest address in X-Forwarded-For that is not one (each proxy appends
 * the address it saw; the entries left of it are the client's to write). 'unknown' for
 * in-process requests, which then share one bucket.
 */
export function clientAddress(config: OriginConfig, c: Context): string {
  const peer = peerAddress(c);
  if (peer === undefined) return 'unknown';
  if (!config.trustProxy.includes(peer)) return peer;
  const hops = (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  for (let i = hops.length - 1; i >= 0; i--) if (!config.trustProxy.includes(hops[i]!)) return hops[i]!;
  return peer;
}
