/**
 * The tenant console (a preact app in console/, built into dist/console by `npm run build`),
 * served by the companion itself at /console: no second server, nothing from another origin.
 *
 * Every answer carries a strict Content-Security-Policy (W3C CSP Level 3): scripts, styles,
 * images and fetches from this origin only, no inline script or style, no plugins, no <base>,
 * and no framing (`frame-ancestors 'none'`, with X-Frame-Options for older browsers), so an
 * injected string cannot run and the console cannot be clickjacked. The app talks to the
 * tenant API with the account session cookie (SameSite=Strict, HttpOnly) and its CSRF token.
 *
 * Built assets carry a content hash in their names, so they are cached for a year as immutable
 * (RFC 8246); index.html is revalidated on every load (strong ETag, RFC 9110 §8.8.3) so a new
 * build is picked up at once.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProblemError } from '../core/errors.ts';
import { createRouter, defineRoute, problemContent, z } from '../core/router.ts';
import type { RouteDeps } from '../core/app-deps.ts';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Names the build writes: letters, digits, dot, dash, underscore; never a path. */
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
/** `name-<hash>.ext` from the build: content-addressed, safe to cache for good. */
const HASHED = /-[A-Za-z0-9_]{8,}\.[a-z]+$/;

interface ConsoleFile {
  body: Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
  immutable: boolean;
}

/**
 * Where the build is: beside the compiled companion (dist/companion/console → dist/console), or,
 * when the companion runs from its sources (tsx), in dist/console of the checkout.
 */
export function defaultConsoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const compiled = path.resolve(here, '..', '..', 'console');
  return path.basename(path.resolve(here, '..', '..')) === 'dist' ? compiled : path.resolve(here, '..', '..', 'dist', 'console');
}

/** Reads the built files once; a missing build is reported per request, never fatal. */
function loadConsole(dir: string): Map<string, ConsoleFile> | undefined {
  if (!fs.existsSync(path.join(dir, 'index.html'))) return undefined;
  const files = new Map<string, ConsoleFile>();
  for (const name of fs.readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    if (type === undefined || !FILE_NAME.test(name)) continue;
    const body = new Uint8Array(fs.readFileSync(path.join(dir, name)));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    files.set(name, { body, type, etag, immutable: HASHED.test(name) });
  }
  return files;
}

const Html = z.string().openapi({ description: 'The console page' });
const NotModified = { description: 'Not modified: the ETag in If-None-Match still matches (RFC 9110 §15.4.5)' };

export function consoleRoutes(deps: RouteDeps) {
  const router = createRouter();
  const dir = deps.config.consoleDir ?? defaultConsoleDir();
  let files: Map<string, ConsoleFile> | undefined;
  const built = () => (files ??= loadConsole(dir));

  const serve = (ifNoneMatch: string | undefined, name: string): Response => {
    const all = built();
    if (all === undefined) {
      throw new ProblemError({ status: 503, code: 'console_not_built', detail: 'the tenant console is not built: run npm run build (or set SVC_CONSOLE_DIR)' });
    }
    const file = FILE_NAME.test(name) ? all.get(name) : undefined;
    if (file === undefined) throw ProblemError.notFound('no such console file');
    const headers = {
      ...SECURITY_HEADERS,
      etag: file.etag,
      'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    };
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === file.etag)) return new Response(null, { status: 304, headers });
    return new Response(file.body, { status: 200, headers: { ...headers, 'content-type': file.type } });
  };

  const page = defineRoute({
    method: 'get',
    path: '/console',
    operationId: 'getConsole',
    tags: ['console'],
    auth: 'public',
    summary: 'The tenant console (sign in with an API key; the page then uses the account session)',
    responses: {
      200: { description: 'The console page', content: { 'text/html': { schema: Html } } },
      304: NotModified,
      503: problemContent('console_not_built: the console has not been built (npm run build)'),
    },
  });
  router.openapi(page, (c) => serve(c.req.header('if-none-match'), 'index.html') as never);

  const asset = defineRoute({
    method: 'get',
    path: '/console/{file}',
    operationId: 'getConsoleAsset',
    tags: ['console'],
    auth: 'public',
    summary: 'A built console asset (script, style sheet, icon); hashed names are immutable',
    request: { params: z.object({ file: z.string().max(128).openapi({ param: { name: 'file', in: 'path' }, example: 'console-3fa85f64.js' }) }) },
    responses: {
      200: {
        description: 'The asset',
        content: {
          'text/javascript': { schema: z.string() },
          'text/css': { schema: z.string() },
          'image/svg+xml': { schema: z.string() },
          'image/png': { schema: z.string() },
          'text/html': { schema: Html },
        },
      },
      304: NotModified,
      404: problemContent('No such asset'),
      503: problemContent('console_not_built'),
    },
  });
  router.openapi(asset, (c) => serve(c.req.header('if-none-match'), c.req.valid('param').file) as never);

  return router;
}
