/**
 * What the hot path (./hot-path.ts) reads of a raw node:http request before it owns it: the few
 * headers it acts on, read in one pass over the raw header list, and the body, read once.
 *
 * A request is owned only when its framing and headers leave nothing to interpret: a declared
 * Content-Length (RFC 9112 §6.2) and no Transfer-Encoding, a plain JSON media type, no Expect,
 * and none of the headers below repeated. Node keeps only the first of a repeated Authorization
 * or Content-Type where the Fetch API the app sees joins them with ", " (RFC 9110 §5.3), so a
 * repeat goes to the app, which answers it as it always has.
 */
import type { IncomingMessage } from 'node:http';

/** The headers the hot path reads; any other header is no business of these three routes. */
export interface HotHeaders {
  contentLength: number;
  /** X-Service-Key and Authorization, as core/auth.ts presentedKey reads them. */
  get(name: string): string | undefined;
}

const READ = new Set(['content-type', 'content-length', 'transfer-encoding', 'expect', 'authorization', 'x-service-key', 'x-request-id', 'host']);

/** application/json, bare or with charset=utf-8 (RFC 8259 §11 defines no other parameter). */
const JSON_TYPE = /^application\/json(?:\s*;\s*charset="?utf-8"?)?$/i;
const DECIMAL = /^\d{1,15}$/;
/** A Host the app's adapter reads as a URL authority (RFC 9110 §7.2): a name or address and a port. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The request's headers when the hot path can own it; undefined hands it to the app. */
export function ownedHeaders(req: IncomingMessage): HotHeaders | undefined {
  const raw = req.rawHeaders;
  const seen = new Map<string, string>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!READ.has(name)) continue;
    if (seen.has(name)) return undefined;
    seen.set(name, raw[i + 1]!);
  }
  if (seen.has('transfer-encoding') || seen.has('expect')) return undefined;
  const type = seen.get('content-type');
  const length = seen.get('content-length');
  const host = seen.get('host');
  if (type === undefined || !JSON_TYPE.test(type.trim())) return undefined;
  if (length === undefined || !DECIMAL.test(length)) return undefined;
  if (host === undefined || !HOST.test(host)) return undefined;
  return { contentLength: Number(length), get: (name) => seen.get(name) };
}

/**
 * The body as one buffer. Content-Length frames it (RFC 9112 §6.2), so node's parser ends it at
 * that length; a connection that closes early rejects.
 */
export function readBody(req: IncomingMessage, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    // on, not once: a settled promise ignores later calls, and once wraps every listener.
    req.on('end', () => {
      if (received !== length) return reject(new Error('the request body ended before its Content-Length'));
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    });
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('the request was aborted')));
  });
}
