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
  /** Unauthenticated GET (the published keys). */
  getPublic(path: string): Promise<unknown>;
}

export interface CompanionApiOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
  /** A gate answer is a few milliseconds of work; ten seconds means something is wrong. */
  timeoutMs?: number;
}

export function companionApi(options: CompanionApiOptions): CompanionApi {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 10_000;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  async function call(method: 'GET' | 'POST', path: string, body: unknown, authenticated: boolean): Promise<unknown> {
    if (baseUrl === '' || (authenticated && options.apiKey === '')) {
      throw new CompanionError('not-configured', 'Action Gate is not set up: the companion URL and API key are set in the extension options.');
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (authenticated) headers['x-service-key'] = options.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await doFetch(`${baseUrl}${path}`, {
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
    getPublic: (path) => call('GET', path, undefined, false),
  };
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.name === 'TimeoutError' ? 'timed out' : e.message;
  return String(e);
}
