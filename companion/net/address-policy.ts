/**
 * Which network addresses the service may send to on a tenant's behalf (interface-spec Events
 * rule 7, DESIGN.md §5): public unicast only. Everything in the IANA special-purpose registries
 * (RFC 6890, with RFC 6598, RFC 6052/8215, RFC 3056, RFC 4380, RFC 4193, RFC 4291) is refused,
 * including IPv6 forms that embed an IPv4 address, because a relay or the OS may route them to
 * the embedded (possibly private) address.
 *
 * Host spellings are normalised by the WHATWG URL parser, the same one undici uses, so decimal
 * (`2130706433`), hex (`0x7f.1`), octal (`0177.0.0.1`) and short (`127.1`) forms are seen as the
 * address they mean; there is no second, diverging parser here. Names are not resolved here:
 * outbound-http.ts checks every address a name resolves to at connect time.
 */

export type AddressRange =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link_local'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'ipv4_mapped'
  | 'ipv4_compatible'
  | 'nat64'
  | '6to4'
  | 'teredo'
  | 'site_local'
  | 'unique_local'
  | 'discard';

export interface ClassifiedAddress {
  family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  bytes: Uint8Array;
  range: AddressRange;
}

interface Block {
  prefix: Uint8Array;
  bits: number;
  range: AddressRange;
}

function v4Block(cidr: string, range: AddressRange): Block {
  const [addr, bits] = cidr.split('/');
  return { prefix: parseDottedQuad(addr!)!, bits: Number(bits), range };
}

function v6Block(cidr: string, range: AddressRange): Block {
  const [addr, bits] = cidr.split('/');
  return { prefix: parseIpv6(addr!)!, bits: Number(bits), range };
}

/** RFC 6890 §2.2.2 (IPv4 special-purpose registry), RFC 6598 (shared address space). First match wins. */
const V4_BLOCKS: readonly Block[] = [
  v4Block('0.0.0.0/8', 'unspecified'), // "this network"
  v4Block('10.0.0.0/8', 'private'), // RFC 1918
  v4Block('100.64.0.0/10', 'cgnat'), // RFC 6598
  v4Block('127.0.0.0/8', 'loopback'),
  v4Block('169.254.0.0/16', 'link_local'), // RFC 3927 (cloud metadata lives here)
  v4Block('172.16.0.0/12', 'private'),
  v4Block('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  v4Block('192.0.2.0/24', 'documentation'), // RFC 5737
  v4Block('192.88.99.0/24', '6to4'), // RFC 7526: deprecated 6to4 relay anycast
  v4Block('192.168.0.0/16', 'private'),
  v4Block('198.18.0.0/15', 'benchmarking'), // RFC 2544
  v4Block('198.51.100.0/24', 'documentation'),
  v4Block('203.0.113.0/24', 'documentation'),
  v4Block('224.0.0.0/4', 'multicast'),
  v4Block('255.255.255.255/32', 'broadcast'),
  v4Block('240.0.0.0/4', 'reserved'), // RFC 1112 "future use"
];

/** RFC 6890 §2.2.3 (IPv6 special-purpose registry) and RFC 4291 §2.4. First match wins. */
const V6_BLOCKS: readonly Block[] = [
  v6Block('::/128', 'unspecified'),
  v6Block('::1/128', 'loopback'),
  v6Block('::ffff:0:0/96', 'ipv4_mapped'), // RFC 4291 §2.5.5.2
  v6Block('::/96', 'ipv4_compatible'), // RFC 4291 §2.5.5.1, deprecated
  v6Block('64:ff9b::/96', 'nat64'), // RFC 6052
  v6Block('64:ff9b:1::/48', 'nat64'), // RFC 8215 local-use NAT64
  v6Block('100::/64', 'discard'), // RFC 6666
  v6Block('2001::/32', 'teredo'), // RFC 4380
  v6Block('2001:db8::/32', 'documentation'), // RFC 3849
  v6Block('2001::/23', 'reserved'), // IETF protocol assignments (ORCHID, AMT, …)
  v6Block('2002::/16', '6to4'), // RFC 3056
  v6Block('fc00::/7', 'unique_local'), // RFC 4193
  v6Block('fe80::/10', 'link_local'),
  v6Block('fec0::/10', 'site_local'), // RFC 3879, deprecated
  v6Block('ff00::/8', 'multicast'),
];

/** RFC 4291 §2.4: only 2000::/3 is allocated as global unicast; anything else is not public. */
const V6_GLOBAL_UNICAST = v6Block('2000::/3', 'public');

function inBlock(bytes: Uint8Array, block: Block): boolean {
  let bits = block.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (block.prefix[i]! & mask)) return false;
  }
  return true;
}

/** Strict dotted quad, as the URL parser and DNS answers write IPv4: 4 decimal octets. */
function parseDottedQuad(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

/** RFC 4291 §2.2 text forms, including `::` and a trailing dotted quad; no zone ids. */
function parseIpv6(s: string): Uint8Array | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(s) || s.length > 45) return undefined;
  let head = s;
  let tail4: Uint8Array | undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail4 = parseDottedQuad(s.slice(lastColon + 1));
    if (!tail4) return undefined;
    head = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const group = (g: string) => (g === '' ? [] : g.split(':'));
  const left = group(halves[0]!);
  const right = halves.length === 2 ? group(halves[1]!) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const words = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const w = words[i]!;
    if (!/^[0-9A-Fa-f]{1,4}$/.test(w)) return undefined;
    const n = parseInt(w, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  }
  if (tail4) out.set(tail4, 12);
  return out;
}

/**
 * The range of an IP address written as DNS answers and URL hostnames write it (dotted quad;
 * IPv6 with or without brackets), or undefined when `ip` is not an address (a host name).
 */
export function classifyIp(ip: string): ClassifiedAddress | undefined {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const v4 = parseDottedQuad(bare);
  if (v4) return { family: 4, bytes: v4, range: V4_BLOCKS.find((b) => inBlock(v4, b))?.range ?? 'public' };
  const v6 = bare.includes(':') ? parseIpv6(bare) : undefined;
  if (!v6) return undefined;
  const special = V6_BLOCKS.find((b) => inBlock(v6, b))?.range;
  return { family: 6, bytes: v6, range: special ?? (inBlock(v6, V6_GLOBAL_UNICAST) ? 'public' : 'reserved') };
}

export interface AddressRules {
  /** Operator setting SVC_WEBHOOK_ALLOW_LOOPBACK (local development only). */
  allowLoopback: boolean;
}

export type AddressVerdict = { ok: true; address: ClassifiedAddress } | { ok: false; range: AddressRange | 'not_an_address'; reason: string };

/** May the service connect to this resolved address? Loopback only with the operator setting. */
export function checkAddress(ip: string, rules: AddressRules): AddressVerdict {
  const address = classifyIp(ip);
  if (!address) return { ok: false, range: 'not_an_address', reason: `expected an IP address, got ${JSON.stringify(ip)}` };
  if (address.range === 'public' || (address.range === 'loopback' && rules.allowLoopback)) return { ok: true, address };
  return { ok: false, range: address.range, reason: `${ip} is a ${address.range.replace(/_/g, ' ')} address; only public addresses are allowed` };
}

export type TargetRefusal =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'credentials_in_url'
  | 'address_not_allowed';

export type TargetVerdict =
  | {
      ok: true;
      url: URL;
      /** Set when the host is an IP literal: it was checked here, no lookup will run. */
      literal?: ClassifiedAddress;
    }
  | { ok: false; code: TargetRefusal; reason: string };

/**
 * Static checks of a delivery URL (interface-spec Events rule 7): https, or http to a loopback
 * receiver with the operator setting; no user:password@ (RFC 3986 §3.2.1); an IP-literal host
 * must be allowed. A host name is checked again, address by address, when connecting.
 */
export function checkTargetUrl(raw: string, rules: AddressRules): TargetVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, code: 'invalid_url', reason: 'expected an absolute URL' };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, code: 'credentials_in_url', reason: 'credentials embedded in the URL are refused; use secret_ref' };
  }
  const host = url.hostname;
  const literal = classifyIp(host);
  if (url.protocol === 'http:') {
    // Only a loopback *literal*: a name would be resolved, and could answer a public address
    // that plain http must never reach.
    if (!rules.allowLoopback || literal?.range !== 'loopback') {
      return { ok: false, code: 'scheme_not_allowed', reason: 'expected an https:// URL (http is allowed only to a loopback address such as http://127.0.0.1:8080/ when the operator enables SVC_WEBHOOK_ALLOW_LOOPBACK)' };
    }
  } else if (url.protocol !== 'https:') {
    return { ok: false, code: 'scheme_not_allowed', reason: `expected an https:// URL, got ${url.protocol}` };
  }
  if (literal) {
    const verdict = checkAddress(host, rules);
    if (!verdict.ok) return { ok: false, code: 'address_not_allowed', reason: verdict.reason };
    return { ok: true, url, literal };
  }
  return { ok: true, url };
}
