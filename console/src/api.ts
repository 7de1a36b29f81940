/**
 * The one way the console talks to the companion: same-origin fetch with the session cookie
 * (HttpOnly, SameSite=Strict), and on writes the session's CSRF token in X-CSRF-Token (the
 * synchronizer token of account/people.ts). Errors are RFC 9457 problem+json; a refusal keeps
 * its `errors[]` so a form can show each one at its field.
 */

export interface FieldError {
  in: string;
  path: string;
  message: string;
  code?: string;
}

export interface Problem {
  status: number;
  code?: string;
  detail?: string;
  errors?: FieldError[];
  capability?: string;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? `HTTP ${problem.status}`);
  }

  get status(): number {
    return this.problem.status;
  }

  /** The message for one body field (JSON Pointer), if the server refused it. */
  fieldError(pointer: string): string | undefined {
    return this.problem.errors?.find((e) => e.path === pointer || e.path.startsWith(`${pointer}/`))?.message;
  }
}

const CSRF_KEY = 'ag.console.csrf';

export function setCsrfToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(CSRF_KEY);
  else sessionStorage.setItem(CSRF_KEY, token);
}

/** Listeners told when the session is gone (401), so the shell shows the sign-in form. */
const signedOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  json?: unknown;
  accept?: string;
  headers?: Record<string, string>;
}

/** The raw response of a successful call; a problem is thrown as ApiError. */
export async function apiResponse(path: string, options: RequestOptions = {}): Promise<Response> {
  const method = options.method ?? (options.json === undefined ? 'GET' : 'POST');
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json', ...options.headers };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') {
    const csrf = sessionStorage.getItem(CSRF_KEY);
    if (csrf) headers['x-csrf-token'] = csrf;
  }
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
  });
  if (res.ok) return res;
  let problem: Problem = { status: res.status };
  try {
    problem = { ...(await res.json()), status: res.status };
  } catch {
    // Not problem+json (a proxy's page): keep the status alone.
  }
  if (res.status === 401 && !headers['x-service-key']) for (const l of signedOutListeners) l();
  throw new ApiError(problem);
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await apiResponse(path, options)).json() as Promise<T>;
}

/** Path segments are always encoded: action keys carry colons, targets dots. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
