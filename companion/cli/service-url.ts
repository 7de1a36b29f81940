/**
 * How the command-line tools find the companion and say when they could not reach it.
 *
 * One setting in every CLI that talks to a companion (npm run export, svc-verify bundle):
 * `--url <base>`, else the SVC_URL variable, else the default address. A failed request is one
 * line naming the URL and the reason, `could not reach http://127.0.0.1:9/tenant/exports/records:
 * connection refused`: fetch() alone says only "fetch failed", with the socket error as its
 * `cause` (WHATWG Fetch §4 "network error"; undici puts the system error code there).
 */

export const SERVICE_URL_ENV = 'SVC_URL';
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8787';

/** The base URL setting is not an http(s) URL a request path can be appended to. */
export class ServiceUrlError extends Error {}

/**
 * The companion's base URL without a trailing slash: `flag`, else SVC_URL, else the default.
 * A path is kept (a companion behind a reverse proxy at /gate), so request paths are appended
 * to it rather than resolved against it, which would drop that path.
 */
export function serviceUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = flag ?? (env[SERVICE_URL_ENV] || undefined);
  const source = flag !== undefined ? '--url' : SERVICE_URL_ENV;
  if (given === undefined) return DEFAULT_SERVICE_URL;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new ServiceUrlError(`${source}: expected the companion's base URL, e.g. ${DEFAULT_SERVICE_URL}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ServiceUrlError(`${source}: expected an http or https URL, got ${url.protocol}`);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ServiceUrlError(`${source}: expected a base URL without query, fragment or credentials`);
  }
  return url.href.replace(/\/+$/, '');
}

/** The request went nowhere: no answer, refused, reset, unknown host. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`could not reach ${url}: ${reason}`);
  }
}

/** System error codes (Node's `err.code`, undici's own) in words an operator reads. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
};

/** Why fetch() failed, from its `cause` when it has one. */
export function unreachableReason(e: unknown, timeoutMs?: number): string {
  const err = e as { name?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  if (err.name === 'TimeoutError') return timeoutMs === undefined ? 'no answer in time' : `no answer within ${Math.round(timeoutMs / 1000)} s`;
  const code = err.cause?.code;
  if (typeof code === 'string') return REASONS[code] ?? code;
  if (typeof err.cause?.message === 'string') return err.cause.message;
  return typeof err.message === 'string' ? err.message : String(e);
}

/**
 * fetch() that names the URL when the request cannot be made. `url` is shown without its
 * query (a paging cursor says nothing about where the companion is). Redirects are refused:
 * a key sent to one address must not follow to another.
 */
export async function fetchService(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<Response> {
  const { timeoutMs, ...rest } = init;
  try {
    return await fetch(url, { redirect: 'error', ...rest, ...(timeoutMs !== undefined ? { signal: AbortSignal.timeout(timeoutMs) } : {}) });
  } catch (e) {
    throw new UnreachableError(withoutQuery(url), unreachableReason(e, timeoutMs));
  }
}

export function withoutQuery(url: string): string {
  const i = url.search(/[?#]/);
  return i === -1 ? url : url.slice(0, i);
}

