/**
 * Problem Details for HTTP APIs (RFC 9457). Every error the companion answers, including
 * 404, 405, 413, malformed JSON and crashes, leaves as `application/problem+json` with a
 * stable machine-readable `code` (DESIGN.md §6); validation errors list every failing field.
 *
 * Throw a ProblemError anywhere below a route; `problemResponse` turns anything thrown into
 * the wire form. Unknown errors become a 500 `internal_error` whose body carries no message,
 * stack or secret: the detail goes to the log, correlated by `request_id`.
 */
import type { ZodError } from 'zod';
import { HTTPException } from 'hono/http-exception';
import { databaseUnavailableCode } from './database-unavailable.ts';

/**
 * Every `code` the companion emits, in one place so clients and tests can rely on the set.
 * Capabilities add their codes here.
 */
export type ProblemCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'malformed_json'
  // core/strict-json.ts: one code per strict JSON rule
  | 'json_invalid_utf8'
  | 'json_lone_surrogate'
  | 'json_duplicate_member'
  | 'json_unsafe_number'
  | 'json_too_deep'
  | 'json_too_many_values'
  | 'validation_failed'
  | 'sandbox_exists'
  // core/rate-limit.ts: signup past SVC_SIGNUP_RATE_PER_MINUTE (RFC 6585 §4)
  | 'rate_limited'
  // account/: sessions, capabilities, billing
  | 'csrf_token_invalid'
  | 'capability_missing'
  | 'person_exists'
  | 'last_owner'
  | 'capability_not_held'
  | 'principal_deactivated'
  | 'key_not_active'
  | 'session_predates_people'
  | 'already_production'
  | 'checkout_not_verified'
  | 'checkout_completed'
  | 'billing_unavailable'
  | 'webhook_signature_invalid'
  | 'sandbox_allowance_exhausted'
  | 'idempotency_key_reused'
  | 'raw_content_rejected'
  | 'batch_must_be_array'
  | 'policy_version_conflict'
  | 'review_not_pending'
  | 'review_duplicate_approver'
  | 'review_approvals_changed'
  // review-context/: reviewers' device keys and the review context sealed to them
  | 'person_required'
  | 'review_key_taken'
  | 'review_keys_limit'
  | 'review_context_off'
  | 'review_context_not_submitter'
  | 'review_context_too_large'
  | 'review_context_not_shared'
  | 'review_context_expired'
  // reviews/reviewer.ts: the reviewer is the authenticated principal
  | 'reviewer_not_authenticated_principal'
  | 'reviewer_not_authorised'
  | 'review_approver_not_a_person'
  | 'platform_user_not_linked'
  | 'identity_taken'
  | 'delivery_not_requeueable'
  // routing/: route dispatches and their signed callbacks
  | 'dispatch_not_requeueable'
  | 'callback_signature_invalid'
  | 'callback_stale'
  | 'callback_replayed'
  | 'callback_not_understood'
  | 'not_yet_anchored'
  | 'seal_not_verified'
  | 'internal_error'
  | 'service_unavailable'
  | 'signer_unavailable'
  | 'database_unavailable'
  | 'not_ready'
  // sign-in/: OpenID Connect sign-in and the device authorization grant
  | 'identity_provider_domain_taken'
  | 'identity_provider_unavailable'
  | 'sign_in_refused'
  | 'device_authorization_not_pending'
  // console/: the built tenant console is missing
  | 'console_not_built';

/** One failing field: where it is, what is wrong, and the validator's issue code. */
export interface FieldError {
  /** Which part of the request: body, query, path, header or cookie. */
  in: ValidationLocation;
  /** RFC 6901 JSON Pointer inside that part ("" is the whole part), e.g. "/email". */
  path: string;
  message: string;
  code?: string;
}

export type ValidationLocation = 'body' | 'query' | 'path' | 'header' | 'cookie';

export interface ProblemInit {
  status: number;
  code: ProblemCode;
  /** Human explanation of this occurrence (RFC 9457 §3.1.4). */
  detail?: string;
  errors?: FieldError[];
  /** Extension members (RFC 9457 §3.2), e.g. `upgrade` on sandbox_exists. */
  extra?: Record<string, unknown>;
  /** Response headers such as Allow (405) or WWW-Authenticate (401). */
  headers?: Record<string, string>;
}

export class ProblemError extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(init: ProblemInit, options?: { cause?: unknown }) {
    super(init.detail ?? init.code, options);
    this.name = 'ProblemError';
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.errors = init.errors;
    this.extra = init.extra ?? {};
    this.headers = init.headers ?? {};
  }

  static notFound(detail = 'no such resource'): ProblemError {
    // interface-spec Authentication 6: another tenant's record answers exactly like a missing one.
    return new ProblemError({ status: 404, code: 'not_found', detail });
  }

  static conflict(code: ProblemCode, detail: string, extra?: Record<string, unknown>): ProblemError {
    return new ProblemError({ status: 409, code, detail, ...(extra ? { extra } : {}) });
  }

  /** 422 listing every failing field, e.g. from a ZodError raised on request input. */
  static validation(errors: FieldError[], detail?: string): ProblemError {
    const n = errors.length;
    return new ProblemError({
      status: 422,
      code: 'validation_failed',
      detail: detail ?? `request validation failed for ${n} field${n === 1 ? '' : 's'}`,
      errors,
    });
  }

  static fromZod(error: ZodError, location: ValidationLocation): ProblemError {
    return ProblemError.validation(fieldErrors(error, location));
  }

  /** The interface spec answers malformed bodies with 422 (interface-spec Errors). */
  static malformedJson(detail = 'request body is not valid JSON (RFC 8259)'): ProblemError {
    return new ProblemError({ status: 422, code: 'malformed_json', detail });
  }
}

/** Flattens zod issues into one FieldError per failing field; each unknown key is its own entry. */
export function fieldErrors(error: ZodError, location: ValidationLocation): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map((p) => (typeof p === 'symbol' ? String(p.description) : p));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const what = location === 'query' ? 'query parameter' : 'field';
        const name = echoableName(key);
        out.push({ in: location, path: jsonPointer([...base, name]), message: `unknown ${what} ${JSON.stringify(name)}`, code: 'unrecognized_key' });
      }
      continue;
    }
    out.push({ in: location, path: jsonPointer(base), message: issue.message, code: issue.code });
  }
  return out;
}

/** Longest caller-chosen name an error repeats whole; a longer one is abbreviated, so no answer echoes unbounded input. */
const ECHOED_NAME_MAX = 64;

export function echoableName(name: string): string {
  return name.length <= ECHOED_NAME_MAX ? name : `${name.slice(0, ECHOED_NAME_MAX)}…(${name.length} characters)`;
}

/** RFC 6901 §3: "~" is written "~0" and "/" is written "~1" inside a reference token. */
export function jsonPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The wire body (RFC 9457 §3.1 members first, then `code`, `errors` and extensions). */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  code: ProblemCode;
  request_id?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export interface ProblemContext {
  /**
   * The matched route's pattern (/v1/records/{action_key}), used as `instance` (RFC 9457
   * §3.1.5): never the request's own path, whose parameters are the caller's to write.
   */
  path?: string;
  requestId?: string;
  /**
   * What the caller sent (core/caller-input.ts): each value found as a whole token in `detail`
   * or a field error's message is replaced by its stand-in, so an error never repeats
   * caller input (an answer quoted back is a reflection vector, and it ends up in logs).
   */
  callerInput?: readonly CallerValue[];
}

/** A value the caller sent and what stands in for it in an error: `{action_key}`, `(input)`. */
export interface CallerValue {
  value: string;
  standIn: string;
}

/** Values shorter than this are left alone: they match ordinary words of the service's own text. */
const MIN_REDACTED = 3;

/**
 * A lowercase word (`approved`, `law`, `sandbox`, `privacy-office`) is the service's own
 * vocabulary, an enum member a route accepted, and is left where the service's text uses it;
 * anything else (digits, capitals, markup, spaces, `@`) is replaced.
 */
const VOCABULARY = /^[a-z]+(?:[-_][a-z]+)*$/;

/**
 * A value is replaced only as a whole token: not where it continues an identifier such as the
 * `law` of `law:review:01J…` (a letter, digit, `_`, `-`, or `:` joined to a letter or digit).
 */
const BEFORE = '(?<![A-Za-z0-9_\\-])(?<![A-Za-z0-9]:)';
const AFTER = '(?![A-Za-z0-9_\\-])(?!:[A-Za-z0-9])';

function redact(text: string, inputs: readonly CallerValue[]): string {
  let out = text;
  for (const { value, standIn } of inputs) {
    if (value.length < MIN_REDACTED || VOCABULARY.test(value) || !out.includes(value)) continue;
    const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`${BEFORE}${escaped}${AFTER}`, 'g'), () => standIn);
  }
  return out;
}

export function problemBody(problem: ProblemError, ctx: ProblemContext = {}): ProblemBody {
  // Longest first, so a value containing another is replaced whole.
  const inputs = [...(ctx.callerInput ?? [])].sort((a, b) => b.value.length - a.value.length);
  const clean = (text: string) => (inputs.length === 0 ? text : redact(text, inputs));
  const body: ProblemBody = {
    // Policy: type is always about:blank and title the status phrase (RFC 9457 §4.2.1); the
    // stable `code` member names the specific problem. A self-hosted companion has no URI it
    // could promise to keep dereferenceable for per-code types, and clients key on `code`.
    type: 'about:blank',
    title: statusPhrase(problem.status),
    status: problem.status,
    ...(problem.detail !== undefined ? { detail: clean(problem.detail) } : {}),
    ...(ctx.path !== undefined ? { instance: ctx.path } : {}),
    code: problem.code,
    ...(ctx.requestId !== undefined ? { request_id: ctx.requestId } : {}),
    ...(problem.errors !== undefined ? { errors: problem.errors.map((e) => ({ ...e, message: clean(e.message) })) } : {}),
  };
  // Extension members follow and never replace a standard one (RFC 9457 §3.2).
  // They are the route's own structured data (a receipt's key, a status), never a message.
  for (const [name, value] of Object.entries(problem.extra)) if (!(name in body)) body[name] = value;
  return body;
}

export function problemResponse(problem: ProblemError, ctx: ProblemContext = {}): Response {
  const headers = new Headers(problem.headers);
  headers.set('content-type', PROBLEM_CONTENT_TYPE);
  // An error describes one occurrence; caches must not replay it (RFC 9111 §5.2.2.5).
  headers.set('cache-control', 'no-store');
  return new Response(JSON.stringify(problemBody(problem, ctx)), { status: problem.status, headers });
}

/**
 * Maps anything thrown to a ProblemError. Returns `internal: true` for errors nobody
 * anticipated, which the caller must log; their message never reaches the body.
 */
export function toProblem(err: unknown): { problem: ProblemError; internal: boolean } {
  if (err instanceof ProblemError) return { problem: err, internal: false };
  if (err instanceof HTTPException) return { problem: fromHttpException(err), internal: err.status >= 500 };
  const unavailable = databaseUnavailableCode(err);
  if (unavailable) return { problem: databaseUnavailable(unavailable), internal: false };
  return {
    problem: new ProblemError({ status: 500, code: 'internal_error', detail: 'the service failed to handle this request; see the log for the request_id' }),
    internal: true,
  };
}

/** Seconds a client waits before retrying while the database is unavailable. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

function databaseUnavailable(code: string): ProblemError {
  return new ProblemError({
    status: 503,
    code: 'database_unavailable',
    detail:
      `the database is unavailable (${code}); retry later. A write that was in flight may or may not have been stored: ` +
      'sent again with the same idempotency_key, where the route takes one, it answers with what was stored',
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) },
  });
}

/** Hono's own exceptions (validator, body limit, media-type gate) in our vocabulary. */
function fromHttpException(err: HTTPException): ProblemError {
  // hono/validator throws 400 "Malformed JSON in request body"; the spec wants 422.
  if (err.status === 400 && /malformed json/i.test(err.message)) return ProblemError.malformedJson();
  const byStatus: Partial<Record<number, ProblemCode>> = {
    400: 'bad_request',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    409: 'conflict',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    503: 'service_unavailable',
  };
  const code = byStatus[err.status] ?? (err.status >= 500 ? 'internal_error' : 'bad_request');
  const detail =
    err.status >= 500
      ? undefined
      : err.status === 415
        ? "the request body's Content-Type is not one this route accepts (see the OpenAPI document)"
        : err.message || undefined;
  return new ProblemError({ status: err.status, code, ...(detail ? { detail } : {}) });
}

const STATUS_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large', // RFC 9110 §15.5.14
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content', // RFC 9110 §15.5.21
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function statusPhrase(status: number): string {
  return STATUS_PHRASES[status] ?? (status >= 500 ? 'Server Error' : 'Client Error');
}
