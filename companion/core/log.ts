/**
 * A minimal structured logger: one JSON line per event on stderr. Callers pass fields, never
 * secrets (API keys, signing keys, webhook secrets); the error handler logs stacks here so
 * they never reach a response body.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

type Level = 'info' | 'warn' | 'error';

export function createJsonLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (level: Level, message: string, fields?: Record<string, unknown>) =>
    write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** Keeps every entry in memory: for tests that assert what was (or was not) logged. */
export interface MemoryLogger extends Logger {
  entries: { level: Level; message: string; fields: Record<string, unknown> }[];
}

export function createMemoryLogger(): MemoryLogger {
  const entries: MemoryLogger['entries'] = [];
  const push = (level: Level) => (message: string, fields: Record<string, unknown> = {}) =>
    void entries.push({ level, message, fields });
  return { entries, info: push('info'), warn: push('warn'), error: push('error') };
}

/** A serialisable view of an error for the log (stack included: logs are operator-only). */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: { name: err.name, message: err.message, stack: err.stack } };
  return { error: { value: String(err) } };
}
