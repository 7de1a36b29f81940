/**
 * The structured log: one JSON object per line on stdout (the access log and every event), so
 * a service manager or container runtime collects one stream.
 *
 * Redaction is by construction, not by search-and-replace afterwards: a line carries only
 * fields named in LOG_FIELDS, each passed through the sanitiser for its kind. An unknown field
 * name is dropped (and named under `dropped_fields`), an identifier that does not look like
 * one is replaced by "[redacted]", and error messages lose every quoted span, where parsers
 * and drivers put the caller's values. Bodies, query strings, keys and free text therefore
 * have no way into the log even when a caller passes them by mistake.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A summary of a thrown value, made by errorFields(); operators read stacks, callers never do. */
export interface LoggedError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
}

/** Every field a log line may carry, with its type. Add a field here before logging it. */
export interface LogFields {
  request_id?: string;
  tenant_id?: string;
  action_key?: string;
  method?: string;
  /** A route pattern such as /v1/records/{action_key}, never the concrete path. */
  route?: string;
  status?: number;
  duration_ms?: number;
  index?: number;
  signal?: string;
  grace_ms?: number;
  url?: string;
  data_dir?: string;
  version?: string;
  key_ids?: string[];
  worker?: string;
  check?: string;
  epoch_seq?: number;
  /** An epoch's period end, RFC 3339. */
  period_end?: string;
  tenants?: number;
  /** A job queue's table name. */
  queue?: string;
  job?: string | number;
  jobs?: number;
  /** An integration target name (validated at registration). */
  target?: string;
  /** A reason the service composed itself (counts, timestamps), never caller text. */
  reason?: string;
  error?: LoggedError | string;
}

type Kind = 'id' | 'token' | 'route' | 'int' | 'number' | 'operator_text' | 'id_list' | 'error';

export const LOG_FIELDS: Record<keyof LogFields, Kind> = {
  request_id: 'id',
  tenant_id: 'id',
  action_key: 'id',
  method: 'token',
  route: 'route',
  status: 'int',
  duration_ms: 'number',
  index: 'int',
  signal: 'token',
  grace_ms: 'int',
  worker: 'token',
  check: 'token',
  epoch_seq: 'int',
  period_end: 'id',
  tenants: 'int',
  queue: 'token',
  job: 'id',
  jobs: 'int',
  target: 'id',
  reason: 'operator_text',
  // Operator-supplied configuration, not request data.
  url: 'operator_text',
  data_dir: 'operator_text',
  version: 'token',
  key_ids: 'id_list',
  error: 'error',
};

const ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TOKEN = /^[A-Za-z0-9._-]{1,64}$/;
// A route pattern, or `unmatched` for requests no route answered.
const ROUTE = /^(?:\/[A-Za-z0-9._~{}\/-]{0,255}|unmatched)$/;
const REDACTED = '[redacted]';

function sanitise(kind: Kind, value: unknown): unknown {
  switch (kind) {
    case 'id':
      return typeof value === 'string' && ID.test(value) ? value : REDACTED;
    case 'token':
      return typeof value === 'string' && TOKEN.test(value) ? value : REDACTED;
    case 'route':
      return typeof value === 'string' && ROUTE.test(value) ? value : REDACTED;
    case 'int':
      return Number.isSafeInteger(value) ? value : REDACTED;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) / 1000 : REDACTED;
    case 'operator_text':
      return typeof value === 'string' ? value.slice(0, 512) : REDACTED;
    case 'id_list':
      return Array.isArray(value) ? value.slice(0, 16).map((v) => sanitise('id', v)) : REDACTED;
    case 'error':
      return sanitiseError(value);
  }
}

/**
 * Drivers and parsers quote what they were given ("Unexpected token 'x', \"x…\" is not valid
 * JSON"); every quoted span is elided so a caller's value never reaches the log through an
 * error message. Stacks keep only their frames.
 */
export function scrubMessage(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '"…"')
    .replace(/\s+/g, ' ')
    .slice(0, 300);
}

function sanitiseError(value: unknown): LoggedError | string {
  if (typeof value === 'string') return scrubMessage(value);
  if (typeof value !== 'object' || value === null) return REDACTED;
  const e = value as Partial<LoggedError>;
  const frames = typeof e.stack === 'string' ? e.stack.split('\n').filter((l) => /^\s+at /.test(l)).join('\n') : '';
  return {
    name: typeof e.name === 'string' && TOKEN.test(e.name) ? e.name : 'Error',
    message: scrubMessage(typeof e.message === 'string' ? e.message : ''),
    ...(typeof e.code === 'string' && TOKEN.test(e.code) ? { code: e.code } : {}),
    ...(frames ? { stack: frames } : {}),
  };
}

/** The fields as they will be written: known names only, each value sanitised. */
export function sanitiseFields(fields: LogFields = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const kind = (LOG_FIELDS as Record<string, Kind | undefined>)[name];
    if (kind === undefined) {
      if (TOKEN.test(name)) dropped.push(name);
      else dropped.push(REDACTED);
      continue;
    }
    out[name] = sanitise(kind, value);
  }
  if (dropped.length > 0) out.dropped_fields = dropped;
  return out;
}

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface JsonLoggerOptions {
  /** Lines below this level are not written. */
  level?: LogLevel;
  write?: (line: string) => void;
  now?: () => Date;
}

function loggerFrom(level: LogLevel, emit: (level: LogLevel, message: string, fields: Record<string, unknown>) => void): Logger {
  const min = LOG_LEVELS.indexOf(level);
  const at = (l: LogLevel) => (message: string, fields?: LogFields) => {
    if (LOG_LEVELS.indexOf(l) >= min) emit(l, message, sanitiseFields(fields));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => void process.stdout.write(line));
  const now = options.now ?? (() => new Date());
  return loggerFrom(options.level ?? 'info', (level, message, fields) =>
    write(`${JSON.stringify({ time: now().toISOString(), level, message, ...fields })}\n`),
  );
}

/** Keeps every entry in memory, sanitised as it would be written: for tests of what is logged. */
export interface MemoryLogger extends Logger {
  entries: { level: LogLevel; message: string; fields: Record<string, unknown> }[];
}

export function createMemoryLogger(level: LogLevel = 'debug'): MemoryLogger {
  const entries: MemoryLogger['entries'] = [];
  return { entries, ...loggerFrom(level, (l, message, fields) => void entries.push({ level: l, message, fields })) };
}

/** A log view of a thrown value (stack frames included: logs are operator-only). */
export function errorFields(err: unknown): { error: LoggedError } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}), ...(err.stack ? { stack: err.stack } : {}) } };
  }
  return { error: { name: 'NonError', message: typeof err } };
}
