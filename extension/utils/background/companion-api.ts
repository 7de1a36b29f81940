/**
 * The background's only door to the companion: fetch with the API key from extension storage,
 * a bounded wait, and failures sorted into the kinds the gate's fail mode cares about
 *. Runs in the background with host permissions, so no CORS is involved and
 * the key never touches a page.
 */
import { isRecord } from '../../../shared/attestation.ts';

export type CompanionFailureKind = 'not-configured' | 'unreachable' | 'http-error' | 'invalid-answer';

export class CompanionError extends Error {
  override name = 'CompanionError';
  constructor(
    readonly kind: CompanionFailureKind,
    message: string,
    /** HTTP status for http-error; problem+json `code` when the companion gave one. */
    readonly status: number | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export interface CompanionApi {
  readonly baseUrl: string;
  get(path: string): Promise<unknown>;
  post(path: string, body: unknown): Promise<unknown>;
  /** DELETE (the review context an employee withdraws). */
  delete(path: string): Promise<unknown>;
  /** Unauthenticated GET (the published keys). */
  getPublic(path: string): Promise<unknown>;
}

export interface CompanionApiOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  /** A gate answer is a few milliseconds of work; ten seconds means something is wrong. */
  timeoutMs?: number;
  /**
   * How long one call may wait out a companion that answers 503 with Retry-After (RFC 9110
   * §10.2.3), as it does while its database fails over: the request is sent again after the
   * time it names, while that stays within this budget. Only requests safe to repeat are: GETs,
   * and POSTs whose body carries an idempotency_key (the gate and reviews answer a repeat with
   * the first answer).
   */
  retryBudgetMs?: number;
  /** Waits between tries: setTimeout unless a test stands in for the clock. */
  sleep?: (ms: number) => Promise<void>;
}

export function companionApi(options: CompanionApiOptions): CompanionApi {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retryBudgetMs = options.retryBudgetMs ?? 5_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  async function call(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown, authenticated: boolean): Promise<unknown> {
    if (baseUrl === '' || (authenticated && options.apiKey === '')) {
      throw new CompanionError('not-configured', 'Action Gate is not set up: the companion URL and API key are set in the extension options.');
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (authenticated) headers['x-service-key'] = options.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const send = async (): Promise<Response> => {
      try {
        return await doFetch(`${baseUrl}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
          // The companion's answers are per request; never answer from a cache.
          cache: 'no-store',
          credentials: 'omit',
          redirect: 'error',
        });
      } catch (e) {
        throw new CompanionError('unreachable', `The companion at ${baseUrl} did not answer (${describe(e)}).`);
      }
    };
    const repeatable = method === 'GET' || (isRecord(body) && typeof body.idempotency_key === 'string');
    let res = await send();
    for (let waited = 0, tries = 0; repeatable && res.status === 503 && tries < MAX_RETRIES; tries++) {
      const after = retryAfterMs(res.headers.get('retry-after'));
      if (after === undefined || waited + after > retryBudgetMs) break;
      await res.body?.cancel();
      await sleep(after);
      waited += after;
      res = await send();
    }
    const text = await res.text().catch(() => '');
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (res.ok) throw new CompanionError('invalid-answer', `${method} ${path} answered ${res.status} with a body that is not JSON.`, res.status);
      }
    }
    if (!res.ok) {
      const problem = isRecord(parsed) ? parsed : {};
      const code = typeof problem.code === 'string' ? problem.code : null;
      const detail = typeof problem.detail === 'string' ? problem.detail : typeof problem.title === 'string' ? problem.title : res.statusText;
      throw new CompanionError('http-error', `${method} ${path} answered ${res.status}${code ? ` (${code})` : ''}: ${detail}`, res.status, code);
    }
    return parsed;
  }

  return {
    baseUrl,
    get: (path) => call('GET', path, undefined, true),
    post: (path, body) => call('POST', path, body, true),
    delete: (path) => call('DELETE', path, undefined, true),
    getPublic: (path) => call('GET', path, undefined, false),
  };
}

/** However short the Retry-After, a call is sent at most this many times more. */
const MAX_RETRIES = 3;

/** Retry-After in delay-seconds (RFC 9110 §10.2.3); an HTTP-date is not waited for. */
function retryAfterMs(value: string | null): number | undefined {
  return value !== null && /^\d{1,4}$/.test(value.trim()) ? Number(value.trim()) * 1000 : undefined;
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.name === 'TimeoutError' ? 'timed out' : e.message;
  return String(e);
}
