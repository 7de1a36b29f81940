/**
 * The gate's hot path: a plain node:http request listener in front of the app for the three
 * routes every AI-workflow action takes (POST /v1/gate, POST /{vertical}/proposed-action, POST
 * /v1/record; interface-spec Endpoints "Gate, record, review, verify"). It does what the app's
 * middleware chain does for these routes, in the same order and with the same answers, without
 * the Fetch API adapter, the middleware chain or a second parse of the body:
 *
 *   request id and access log (ops/access-log.ts requestTelemetry)
 *   413 from the declared length (core/body-limit.ts limitRequestBody)
 *   Cache-Control: no-store on every answer (core/router.ts noStore; RFC 9111 §5.2.2.5)
 *   the API key and its capability (core/auth.ts createApiKeyAuth), and its last use
 *   strict I-JSON (core/strict-json.ts), parsed once: the validator reads the same value
 *   the route's schema (./hot-path-routes.ts), its 422 built as the route's hook builds it
 *   problem+json for every failure (app.ts onError), without the caller's input
 *
 * Everything else (another method, path or media type, a query string, chunked or unusual
 * framing, a repeated header) goes to the app unchanged (./hot-path-request.ts). The sign-up
 * rate limit and the read-durability wait of app.ts apply to other paths and to reads only.
 * test/companion/hot-path*.test.ts posts a corpus to both and compares the answers' bytes.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { authenticatePresentedKey, cachedKeyLookup, lastUseRecorder, presentedKey, requireCapability, unauthorized } from '../core/auth.ts';
import type { PresentedKeyLookup, VersionedKeyLookup } from '../core/auth.ts';
import type { Context } from 'hono';
import { callerInput } from '../core/caller-input.ts';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemBody, toProblem } from '../core/errors.ts';
import type { IdFactory } from '../core/ids.ts';
import type { LogFields, Logger } from '../core/log.ts';
import { errorFields } from '../core/log.ts';
import { parseStrictJson } from '../core/strict-json.ts';
import type { Metrics } from '../ops/metrics.ts';
import { ownedHeaders, readBody } from './hot-path-request.ts';
import type { HotHeaders } from './hot-path-request.ts';
import { hotRoutes } from './hot-path-routes.ts';
import type { HotRoute, HotRouteDeps } from './hot-path-routes.ts';

export interface HotPathDeps extends HotRouteDeps {
  config: HotRouteDeps['config'] & { maxBodyBytes: number };
  ids: IdFactory;
  log: Logger;
  metrics: Metrics;
  keys: PresentedKeyLookup;
  /** After an answer below 400: the key's last use (core/auth.ts lastUseRecorder), as the app records it. */
  used(keyId: string): Promise<void> | undefined;
}

/** As ops/access-log.ts: an incoming X-Request-Id of this shape is kept, any other replaced. */
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

type ServiceDeps = Omit<HotPathDeps, 'keys' | 'used' | 'store'> & { store: HotPathDeps['store'] & { tenants: VersionedKeyLookup } };

/** The hot path over the service's deps, as core/server.ts startServer's `front`. */
export function hotPathFront(deps: ServiceDeps): (app: RequestListener) => RequestListener {
  // Keys from memory, the credential version read once per batch of requests (core/auth.ts cachedKeyLookup).
  const hot: HotPathDeps = { ...deps, keys: cachedKeyLookup(deps.store.tenants), used: lastUseRecorder(deps.store.tenants, () => deps.clock.now()) };
  return (app) => createHotPath(hot, app);
}

/** A listener that answers the hot routes itself and hands every other request to `app`. */
export function createHotPath(deps: HotPathDeps, app: RequestListener): RequestListener {
  const routes = hotRoutes(deps);
  return (req, res) => {
    if (req.method !== 'POST') return app(req, res);
    const route = routes.get(req.url ?? '');
    if (route === undefined) return app(req, res);
    const headers = ownedHeaders(req);
    if (headers === undefined) return app(req, res);
    void serve(deps, route, req, res, headers);
  };
}

interface Answer {
  status: number;
  /** Text, or the UTF-8 bytes of an answer the sealing thread encoded (evidence/sealer.ts SealOutcome bytes). */
  body: string | Uint8Array;
  headers: Record<string, string>;
  /**
   * How the adapter names the length it adds: a response the route's middleware touched is
   * re-read as a stream (content-length); the 413, answered before that middleware, is not
   * (Content-Length). The names are case-insensitive (RFC 9110 §5.1); the bytes are kept alike.
   */
  lengthName?: 'Content-Length';
  /** Set once the key is authenticated, for the access log and its last use. */
  tenantId?: string;
  keyId?: string;
}

async function serve(deps: HotPathDeps, route: HotRoute, req: IncomingMessage, res: ServerResponse, headers: HotHeaders): Promise<void> {
  const started = performance.now();
  const incoming = headers.get('x-request-id');
  const requestId = incoming !== undefined && INCOMING_REQUEST_ID.test(incoming) ? incoming : deps.ids.next('req');
  let answer: Answer;
  try {
    answer = await handle(deps, route, req, headers, requestId);
  } catch (err) {
    // As core/server.ts answers what escapes the app's own error handler.
    deps.log.error('request failed outside the app error handler', errorFields(err));
    answer = await problemAnswer(toProblem(err).problem, route, requestId, undefined);
  }
  answer.headers['x-request-id'] = requestId;
  write(res, answer);

  const seconds = (performance.now() - started) / 1000;
  deps.metrics.observeRequest('POST', route.pattern, answer.status, seconds);
  const fields: LogFields = { method: 'POST', route: route.pattern, status: answer.status, duration_ms: seconds * 1000, request_id: requestId };
  if (answer.tenantId !== undefined) fields.tenant_id = answer.tenantId;
  deps.log.info('request', fields);
}

async function handle(deps: HotPathDeps, route: HotRoute, req: IncomingMessage, headers: HotHeaders, requestId: string): Promise<Answer> {
  // The app's order: body limit, credential, capability, strict JSON, schema, the route.
  if (headers.contentLength > deps.config.maxBodyBytes) {
    const tooLarge = new ProblemError({ status: 413, code: 'payload_too_large', detail: `request body exceeds the limit of ${deps.config.maxBodyBytes} bytes` });
    return { ...(await problemAnswer(tooLarge, route, requestId, undefined)), lengthName: 'Content-Length' };
  }
  // Read from the start, so the body is in memory by the time the key is resolved.
  const body = readBody(req, headers.contentLength);
  body.catch(() => undefined);
  let text: string | undefined;
  let tenantId: string | undefined;
  try {
    const key = presentedKey(headers);
    if (key === undefined) throw unauthorized();
    const auth = await authenticatePresentedKey(deps.keys, key, deps.clock.now().toISOString());
    requireCapability(auth.principal, route.capability);
    tenantId = auth.tenantId;
    const parsed = parseStrictJson(await body);
    text = parsed.text;
    const outcome = await route.seal(auth, route.validate(parsed.value));
    // Sorted by name, as the app's Fetch API headers are written.
    const answerHeaders: Record<string, string> = { 'cache-control': 'no-store', 'content-type': 'application/json' };
    if (outcome.replayed) answerHeaders['idempotent-replayed'] = 'true';
    const answer: Answer = {
      status: outcome.status,
      body: outcome.bytes ?? outcome.text ?? JSON.stringify(outcome.body),
      headers: answerHeaders,
      tenantId,
      keyId: auth.keyId,
    };
    if (outcome.status < 400) {
      // A use already recorded within the interval answers at once, without a promise to wait on.
      const recording = deps.used(auth.keyId);
      if (recording !== undefined) await recording;
    }
    return answer;
  } catch (err) {
    const { problem, internal } = toProblem(err);
    const where = { request_id: requestId, method: 'POST', route: route.pattern };
    if (internal) deps.log.error('request failed', { ...where, ...errorFields(err) });
    else if (problem.code === 'database_unavailable') deps.log.warn('database unavailable', { ...where, reason: problem.detail });
    return { ...(await problemAnswer(problem, route, requestId, text)), ...(tenantId !== undefined ? { tenantId } : {}) };
  }
}

/**
 * app.ts problemContext: the route's pattern as instance, the request id, and the strings of a
 * body that passed strict JSON kept out of the answer (core/caller-input.ts reads them from the
 * body text; these routes have no path parameters, and a query goes to the app).
 */
async function problemAnswer(problem: ProblemError, route: HotRoute, requestId: string, text: string | undefined): Promise<Answer> {
  const input = await callerInput(bodyOnlyContext(text));
  const body = JSON.stringify(problemBody(problem, { path: route.pattern, requestId, callerInput: input }));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(problem.headers)) headers[name.toLowerCase()] = value;
  // core/errors.ts problemResponse's headers; the app writes its headers sorted by name.
  headers['content-type'] = PROBLEM_CONTENT_TYPE;
  headers['cache-control'] = 'no-store';
  return { status: problem.status, body, headers: sortedHeaders(headers) };
}

/** The context core/caller-input.ts reads: no parameters, no query, the body text if it was read. */
function bodyOnlyContext(text: string | undefined): Context {
  return {
    req: {
      param: () => ({}),
      queries: () => ({}),
      bodyCache: text === undefined ? {} : { text: Promise.resolve(text) },
    },
  } as unknown as Context;
}

function sortedHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) out[name] = headers[name]!;
  return out;
}

/**
 * As @hono/node-server writes an answer: its headers, then the body's length, then the body.
 * A body made here goes to end() as a string: node:http then sends the header block and the
 * body as one string in one write (OutgoingMessage _send joins them when the first chunk is a
 * utf8 string), where encoding it into a Buffer first would cost a pass more. A body that comes
 * as bytes, encoded where it was made, goes as they are: the header block and the bytes in one
 * writev, and no pass over the text here at all.
 */
function write(res: ServerResponse, answer: Answer): void {
  const { body } = answer;
  answer.headers[answer.lengthName ?? 'content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength);
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body, 'utf8');
}
