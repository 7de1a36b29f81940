/**
 * The one HTTP client for every request the service sends to a tenant-supplied URL
 * (interface-spec Events rule 7, DESIGN.md §5): webhook deliveries, review-route dispatches,
 * timestamp authorities, witnesses and identity providers (sign-in/oidc-fetch.ts adapts it
 * to the fetch openid-client calls).
 *
 * - The URL is checked first (address-policy.ts): https only (http only to loopback under the
 *   operator setting), no credentials, an IP-literal host must be public.
 * - A host name is resolved by our own `lookup`, handed to undici's connector, which checks
 *   every address the name resolves to and refuses the connection if any is not allowed. The
 *   socket then connects to exactly the checked address: there is no window between check and
 *   use for DNS rebinding.
 * - Redirects are never followed (undici's dispatcher does not follow them; a 3xx is simply a
 *   non-2xx answer), TLS certificates and host names are verified (Node's defaults, never
 *   turned off), connect and read timeouts are short, and at most `maxResponseBytes` of the
 *   answer is read.
 */
import dns from 'node:dns';
import net from 'node:net';
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import type { Agent, Dispatcher, buildConnector } from 'undici';
import { checkAddress, checkTargetUrl } from './address-policy.ts';
import type { AddressRules, TargetRefusal } from './address-policy.ts';

export type OutboundErrorCode =
  | TargetRefusal
  | 'dns_failed'
  | 'connect_failed'
  | 'tls_failed'
  | 'timeout'
  | 'response_too_large'
  | 'network_error';

export class OutboundError extends Error {
  readonly code: OutboundErrorCode;
  constructor(code: OutboundErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundError';
    this.code = code;
  }
}

export interface OutboundHttpOptions extends AddressRules {
  connectTimeoutMs?: number;
  /** Time allowed for the answer's headers, and separately between body chunks. */
  readTimeoutMs?: number;
  maxResponseBytes?: number;
  /** Resolver (tests pin names to addresses with it); defaults to the OS resolver. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  /**
   * Called with every address a socket is about to connect to (an IP-literal host, or each
   * checked answer for a name), after the address checks; throwing refuses the connection.
   * Tests pass one that refuses anything off loopback, so that a regression of the checks fails
   * the test instead of sending a packet off the machine.
   */
  beforeConnect?: (address: string) => void;
}

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
  /** Aborts the request (e.g. the caller's lease ends first). */
  signal?: AbortSignal;
}

/** Any request, for a client that reads the answer's headers too (an identity provider's discovery and keys). */
export interface OutboundExchange extends Omit<OutboundRequest, 'body'> {
  method: 'GET' | 'POST';
  body?: string | Uint8Array;
}

export interface OutboundResponse {
  status: number;
  /** The first bytes of the answer, at most maxResponseBytes. */
  body: Uint8Array<ArrayBuffer>;
  /** The Retry-After header as sent, if any (the one header a sender acts on: RFC 9110 §10.2.3). */
  retryAfter?: string;
  /** Set when the answer was longer than maxResponseBytes and only its first bytes were read. */
  truncated?: true;
}

export interface OutboundAnswer extends OutboundResponse {
  /** The answer's headers as undici hands them over (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
}

export const OUTBOUND_DEFAULTS = { connectTimeoutMs: 3_000, readTimeoutMs: 10_000, maxResponseBytes: 64 * 1024 } as const;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export interface OutboundHttp {
  /** POSTs the exact body bytes; resolves with any HTTP status, rejects with OutboundError. */
  post(req: OutboundRequest): Promise<OutboundResponse>;
  /** The same guards for any method, with the answer's headers. */
  send(req: OutboundExchange): Promise<OutboundAnswer>;
  close(): Promise<void>;
}

export function createOutboundHttp(options: OutboundHttpOptions): OutboundHttp {
  const rules: AddressRules = { allowLoopback: options.allowLoopback };
  const connectTimeoutMs = options.connectTimeoutMs ?? OUTBOUND_DEFAULTS.connectTimeoutMs;
  const readTimeoutMs = options.readTimeoutMs ?? OUTBOUND_DEFAULTS.readTimeoutMs;
  const maxResponseBytes = options.maxResponseBytes ?? OUTBOUND_DEFAULTS.maxResponseBytes;
  const resolve = options.resolve ?? ((hostname: string) => dns.promises.lookup(hostname, { all: true, verbatim: true }));

  /**
   * net/tls `lookup` hook: resolve, then refuse the whole name if any answer is not allowed
   * (a name mixing public and private answers is an attack, not a configuration).
   */
  function guardedLookup(hostname: string, opts: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), []);
        for (const a of addresses) {
          const verdict = checkAddress(a.address, rules);
          if (!verdict.ok) return callback(Object.assign(new Error(`${hostname} resolves to ${verdict.reason}`), { code: 'ESVCADDRESS' }), []);
        }
        try {
          for (const a of addresses) options.beforeConnect?.(a.address);
        } catch (err) {
          return callback(err as NodeJS.ErrnoException, []);
        }
        if ((opts as LookupAllOptions).all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  }

  // undici is loaded on the first send, not at startup: a service with no webhook target never
  // pays for it, and the process starts faster.
  let agent: Promise<Agent> | undefined;
  const undici = () =>
    (agent ??= import('undici').then((undiciModule) => {
      const { Agent } = undiciModule;
      const connector = undiciModule.buildConnector({ timeout: connectTimeoutMs, lookup: guardedLookup, rejectUnauthorized: true });
      // An IP-literal host never reaches `lookup` (net.connect skips it), so it meets
      // beforeConnect here; names meet it in guardedLookup, once their answers are known.
      const connect: buildConnector.connector = (opts, callback) => {
        const literal = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
        if (options.beforeConnect && net.isIP(literal) !== 0) {
          try {
            options.beforeConnect(literal);
          } catch (err) {
            callback(err as Error, null);
            return;
          }
        }
        return connector(opts, callback);
      };
      return new Agent({ connect, headersTimeout: readTimeoutMs, bodyTimeout: readTimeoutMs, keepAliveTimeout: 4_000, connections: 64 });
    }));

  async function send(req: OutboundExchange): Promise<OutboundAnswer> {
    const target = checkTargetUrl(req.url, rules);
    if (!target.ok) throw new OutboundError(target.code, target.reason);
    const dispatcher = await undici();
    return new Promise((resolve, reject) => {
      const { url } = target;
      const signal = req.signal;
      const exchange = new Exchange(maxResponseBytes, (err, res) => {
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(toOutboundError(err));
        else resolve(res!);
      });
      const onAbort = () => exchange.abort(signal!.reason as Error);
      if (signal?.aborted) return exchange.abort(signal.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      dispatcher.dispatch({ origin: url.origin, path: url.pathname + url.search, method: req.method, headers: req.headers, body: req.body ?? null }, exchange);
    });
  }

  return {
    post: (req) => send({ ...req, method: 'POST' }),
    send,
    async close() {
      if (agent) await (await agent).close();
    },
  };
}

/**
 * One request's handler on undici's dispatch API (undici Dispatcher.dispatch): the final
 * status and the first `cap` bytes of the answer, nothing more. undici's `request()` wraps the
 * same call in a Readable body stream and an abort-signal handler: measured against a loopback
 * receiver, about 75 µs of CPU a post against 31 µs here.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly #cap: number;
  readonly #done: (err: unknown, res?: OutboundAnswer) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #status = 0;
  #retryAfter: string | undefined;
  #headers: Record<string, string | string[] | undefined> = {};
  #truncated = false;
  #chunks: Uint8Array[] = [];
  #size = 0;
  #settled = false;

  constructor(cap: number, done: (err: unknown, res?: OutboundAnswer) => void) {
    this.#cap = cap;
    this.#done = done;
  }

  /** The caller's signal fired: cut the request off, or refuse it if it has not started yet. */
  abort(reason: Error): void {
    this.#abortReason = reason;
    if (this.#controller) this.#controller.abort(reason);
    else this.#finish(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason) controller.abort(this.#abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx answers come before the final one (RFC 9110 §15.2); only the final status counts.
    this.#status = statusCode;
    this.#headers = headers;
    const retryAfter = headers['retry-after'];
    this.#retryAfter = typeof retryAfter === 'string' ? retryAfter.slice(0, 64) : undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#status < 200) return;
    const room = this.#cap - this.#size;
    this.#chunks.push(chunk.subarray(0, room));
    this.#size += Math.min(room, chunk.length);
    if (chunk.length > room) {
      this.#truncated = true;
      // Stop reading: the status is what counts, and a huge answer must not cost memory.
      this.#finish(null);
      controller.abort(new Error('answer longer than the cap; the rest is not read'));
    }
  }

  onResponseEnd(): void {
    this.#finish(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#finish(err);
  }

  #finish(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    if (err) return this.#done(err);
    const body = new Uint8Array(this.#size);
    let at = 0;
    for (const c of this.#chunks) (body.set(c, at), (at += c.length));
    this.#done(null, {
      status: this.#status,
      body,
      headers: this.#headers,
      ...(this.#retryAfter !== undefined ? { retryAfter: this.#retryAfter } : {}),
      ...(this.#truncated ? { truncated: true as const } : {}),
    });
  }
}

/** A short, secret-free description of what went wrong, for last_error. */
function toOutboundError(err: unknown): OutboundError {
  if (err instanceof OutboundError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const message = e.message ?? String(err);
  if (code === 'ESVCADDRESS' || e.cause?.code === 'ESVCADDRESS') return new OutboundError('address_not_allowed', e.cause?.message ?? message, { cause: err });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return new OutboundError('dns_failed', `name resolution failed (${code})`, { cause: err });
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new OutboundError('timeout', 'connect timed out', { cause: err });
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return new OutboundError('timeout', 'the receiver did not answer in time', { cause: err });
  if (e.name === 'AbortError' || code === 'UND_ERR_ABORTED' || code === 'ABORT_ERR') return new OutboundError('timeout', 'the delivery was cut off at its deadline', { cause: err });
  if (code.startsWith('ERR_TLS') || code.startsWith('CERT_') || code.includes('SELF_SIGNED') || code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code.startsWith('UNABLE_TO')) {
    return new OutboundError('tls_failed', `TLS failed (${code})`, { cause: err });
  }
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'UND_ERR_SOCKET') {
    return new OutboundError('connect_failed', `connection failed (${code})`, { cause: err });
  }
  return new OutboundError('network_error', code ? `request failed (${code})` : 'request failed', { cause: err });
}
