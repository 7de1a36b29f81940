/**
 * What every map is read from: the running configuration (core/config.ts) and the app's own
 * OpenAPI document (core/openapi.ts, the schema authority of interface-spec Versioning), so a
 * map cannot list a route the build does not serve, nor miss one it does.
 */
import path from 'node:path';
import type { Config } from '../core/config.ts';
import type { OpenApiDocument } from '../core/openapi.ts';

/**
 * The address this companion is reached at, without a trailing slash: SVC_PUBLIC_BASE_URL, or
 * the listening address when unset (core/config.ts). Never a request's Host header.
 */
export function publicBaseUrl(config: Config): string {
  return config.publicBaseUrl;
}

/** Whether the companion listens only on the loopback interface (RFC 1122 §3.2.1.3; RFC 4291 §2.5.3). */
export function listensOnLoopback(config: Config): boolean {
  return config.host === 'localhost' || config.host === '::1' || /^127\./.test(config.host);
}

/** A path as a deployer writes it: relative to the working directory when inside it. */
export function displayPath(absolute: string): string {
  const relative = path.relative(process.cwd(), absolute);
  return relative === '' ? '.' : relative.startsWith('..') || path.isAbsolute(relative) ? absolute : `./${relative}`;
}

export type AuthKind = 'public' | 'api_key' | 'account_session' | 'metrics_token' | 'signed_request';

export interface Operation {
  method: string;
  path: string;
  operation_id: string;
  summary: string;
  tags: string[];
  auth: AuthKind;
  /** Every security scheme that is accepted (alternatives), e.g. a key or the account session. */
  schemes: string[];
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Security scheme name (core/openapi.ts) → how a deployer would describe it. */
const SCHEME_AUTH: Record<string, AuthKind> = {
  BearerAuth: 'api_key',
  ServiceKey: 'api_key',
  ServiceAccountSession: 'account_session',
  MetricsToken: 'metrics_token',
};

/** Routes whose credential is a signature over the raw body (interface-spec Authentication 3). */
const SIGNED_PATH = /^\/integrations\/callbacks\//;

/** Every operation of the document, in path order. */
export function operations(document: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  const paths = (document.paths ?? {}) as Record<string, Record<string, any>>;
  for (const [p, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const security = (op.security ?? []) as Record<string, string[]>[];
      const schemes = security.flatMap((s) => Object.keys(s));
      const scheme = schemes[0];
      const auth: AuthKind = scheme ? (SCHEME_AUTH[scheme] ?? 'api_key') : SIGNED_PATH.test(p) ? 'signed_request' : 'public';
      out.push({ method: method.toUpperCase(), path: p, operation_id: String(op.operationId ?? ''), summary: String(op.summary ?? ''), tags: (op.tags ?? []) as string[], auth, schemes });
    }
  }
  return out;
}

/** The operation serving `method path` in this build, if any. */
export function findOperation(document: OpenApiDocument, method: string, p: string): Operation | undefined {
  return operations(document).find((o) => o.method === method && o.path === p);
}

/** Whether this build serves `method path`. */
export function serves(document: OpenApiDocument, method: string, p: string): boolean {
  return findOperation(document, method, p) !== undefined;
}
