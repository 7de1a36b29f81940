/**
 * Connections to the scale-out engine (PostgreSQL, through the `postgres` driver). Every
 * capability's PostgreSQL store is built over a `Queryable`: the pool outside a transaction,
 * or the transaction's own connection inside one, so the same store code serves both.
 */
import postgres from 'postgres';

/** The pool or an open transaction: what a capability's PostgreSQL store runs its queries on. */
export type Queryable = postgres.ISql<Record<string, never>>;
export type Pool = postgres.Sql<Record<string, never>>;
export type PgTransaction = postgres.TransactionSql<Record<string, never>>;

export interface ConnectOptions {
  /** Connections in the pool; each open transaction holds one. */
  max?: number;
  /** Socket directory or host, overriding the URL's (tests use a unix socket). */
  host?: string;
}

/**
 * Opens a pool. bigint columns (tenant_seq, millisecond times) come back as numbers: every
 * value the schema keeps there is far below 2^53.
 */
export function connect(url: string, options: ConnectOptions = {}): Pool {
  // libpq's form for a unix socket and a user without a host part, postgres:///db?host=/run/postgresql&user=gate,
  // which the driver does not read from the URL: taken out and passed as options.
  const parsed = new URL(url);
  const socketHost = parsed.searchParams.get('host') ?? undefined;
  const user = parsed.searchParams.get('user') ?? undefined;
  parsed.searchParams.delete('host');
  parsed.searchParams.delete('user');
  const host = options.host ?? socketHost;
  return postgres(parsed.toString(), {
    max: options.max ?? 10,
    ...(host ? { host } : {}),
    ...(user ? { user } : {}),
    onnotice: () => {},
    types: {
      bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
    },
  }) as unknown as Pool;
}

/**
 * Runs `fn` atomically: in a transaction of its own on the pool, or in a savepoint when
 * `sql` is already a transaction (a store method that writes several rows is all or nothing
 * either way).
 */
export function atomically<T>(sql: Queryable, fn: (tx: PgTransaction) => Promise<T>): Promise<T> {
  if ('savepoint' in sql) return (sql as PgTransaction).savepoint(fn) as Promise<T>;
  return (sql as Pool).begin(fn) as Promise<T>;
}
