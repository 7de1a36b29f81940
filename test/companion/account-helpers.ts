/** Signing in to an account session in tests: the cookie and CSRF token a browser would hold. */
import type { RequestOptions, TestContext, TestResponse } from './helpers.ts';

export interface Session {
  cookie: string;
  csrf: string;
  res: TestResponse;
  /** A request carrying the session cookie, and on writes the CSRF token. */
  request(path: string, options?: RequestOptions): Promise<TestResponse>;
}

export async function signIn(ctx: TestContext, apiKey: string): Promise<Session> {
  const res = await ctx.request('/account/session', { method: 'POST', key: apiKey });
  if (res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = /^(svc_session=[^;]+)/.exec(setCookie)?.[1];
  if (!cookie) throw new Error(`no session cookie in ${setCookie}`);
  const csrf = res.body.csrf_token as string;
  return {
    cookie,
    csrf,
    res,
    request(path, options = {}) {
      const method = options.method ?? (options.json === undefined ? 'GET' : 'POST');
      const headers: Record<string, string> = { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': csrf }), ...options.headers };
      return ctx.request(path, { ...options, method, headers });
    },
  };
}
