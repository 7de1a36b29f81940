/**
 * Errors that mean the database cannot serve requests for now, not that the request or our
 * code is at fault: the server is down, restarting or failing over, a connection was cut, the
 * disk is full, or another writer held the lock past the wait limit. They are answered with
 * 503 `database_unavailable` and Retry-After (RFC 9110 §15.6.4, §10.2.3), never 500, and the
 * companion serves again by itself once the database does (the PostgreSQL driver opens new
 * connections on demand; SQLite needs nothing reopened).
 */

/**
 * postgres.js's own codes for a connection the server cut or that could not be opened in time.
 * Not CONNECTION_ENDED or CONNECTION_DESTROYED: those follow our own sql.end(), a shutdown.
 */
const DRIVER_CONNECTION_CODES: ReadonlySet<string> = new Set(['CONNECTION_CLOSED', 'CONNECT_TIMEOUT']);

/** Node's errors for a socket that could not connect or was cut (the database's socket). */
const SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * PostgreSQL's SQLSTATEs for the same (Appendix A of its manual): class 08 connection
 * exception, class 53 insufficient resources (disk full, out of memory, too many connections),
 * 57P01–57P03 the server shutting down or not yet accepting connections, and 25006 a write sent
 * to a standby, as during a failover.
 */
function unavailableSqlState(state: string): boolean {
  return state.startsWith('08') || state.startsWith('53') || state === '57P01' || state === '57P02' || state === '57P03' || state === '25006';
}

/**
 * SQLite's result codes for the same: the disk or max_page_count is full, the file or
 * connection became read-only, or the write lock stayed busy past the wait limit (store.ts).
 */
const SQLITE_CODES: ReadonlySet<string> = new Set(['SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_BUSY']);

/** The error's code when it says the database is unavailable, else undefined. */
export function databaseUnavailableCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, name, syscall } = err as { code?: unknown; name?: unknown; syscall?: unknown };
  if (typeof code !== 'string') return undefined;
  if (DRIVER_CONNECTION_CODES.has(code)) return code;
  // Only a socket's: ENOENT from a file read is not the database's.
  if (SOCKET_CODES.has(code) && (syscall === 'connect' || syscall === 'read' || syscall === 'write')) return code;
  if (name === 'PostgresError' && unavailableSqlState(code)) return code;
  // better-sqlite3 reports extended codes too: SQLITE_READONLY_DBMOVED is a SQLITE_READONLY.
  if (SQLITE_CODES.has(code.split('_').slice(0, 2).join('_'))) return code;
  return undefined;
}
