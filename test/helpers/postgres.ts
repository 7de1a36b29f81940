/**
 * A throwaway PostgreSQL server from Debian's `postgresql` package (.ci/run installs it): initdb
 * into a temp dir, the server listening on a unix socket in that dir only (no TCP port, so
 * parallel runs never clash), stopped and removed by `stop()`. PostgreSQL refuses to run as
 * root, so as root (CI) the server runs as the `postgres` user the package creates.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A server listening on a unix socket, and psql to it. */
export interface PostgresClient {
  /** The socket directory: the `host` a client passes. */
  socketDir: string;
  /** Runs SQL through psql, stopping at the first error; returns its unaligned, tuples-only output. */
  psql(sql: string): string;
}

export interface TestPostgres extends PostgresClient {
  /** Shuts the server down (sessions end, data stays), as an outage does, until startAgain(). */
  shutDown(): void;
  startAgain(): void;
  /** Stops the server and removes its directory. */
  stop(): void;
}

export interface StartPostgresOptions {
  /**
   * fsync and synchronous_commit on, as a production server runs: for benchmarks that compare
   * durable commits with SQLite's. Off by default: tests need correctness, not the disk's speed.
   */
  durable?: boolean;
  /** Above the default 100 when several test processes share the server (postgres-global-setup.ts). */
  maxConnections?: number;
}

/** The newest installed server's bin directory, or undefined when Debian's postgresql is not installed. */
export function postgresBinDir(): string | undefined {
  for (const version of fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').sort().reverse() : []) {
    const dir = `/usr/lib/postgresql/${version}/bin`;
    if (fs.existsSync(`${dir}/initdb`)) return dir;
  }
  return undefined;
}

export function startPostgres(options: StartPostgresOptions = {}): TestPostgres {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql: apt-get install postgresql');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) =>
    asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', `${bin}/${tool}`, ...args], { stdio: 'pipe' }) : execFileSync(`${bin}/${tool}`, args, { stdio: 'pipe' });
  if (asRoot) execFileSync('chown', ['postgres:', dir]);
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const durability = options.durable ? '-c fsync=on -c synchronous_commit=on' : '-c fsync=off';
  const connections = options.maxConnections ? ` -c max_connections=${options.maxConnections}` : '';
  const start = () => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-s', '-o', `-c listen_addresses='' -k ${dir} ${durability}${connections}`, 'start']);
  start();
  return {
    ...postgresAt(dir),
    shutDown: () => void run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-s', 'stop']),
    startAgain: () => void start(),
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-s', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** psql against a server already listening on a unix socket in `socketDir`. */
export function postgresAt(socketDir: string): PostgresClient {
  return {
    socketDir,
    psql: (sql) => execFileSync('psql', ['-h', socketDir, '-U', 'postgres', '-d', 'postgres', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1'], { input: sql, encoding: 'utf8', stdio: 'pipe' }),
  };
}

/** `?` placeholders as PostgreSQL's $1, $2, …, so one SQL text serves both engines; a `?` inside a quoted literal stays. */
export function numberedPlaceholders(query: string): string {
  let n = 0;
  return query.replace(/'(?:[^']|'')*'|"[^"]*"|\?/g, (m) => (m === '?' ? `$${++n}` : m));
}
