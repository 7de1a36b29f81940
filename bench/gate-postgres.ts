/**
 * The gate on PostgreSQL: durable sealed gate decisions over HTTP on loopback (law pack,
 * production tenant, 50 connections) with one companion process on a PostgreSQL database, and
 * with two processes on that same database and the load split across them, each against one
 * companion on its embedded SQLite file measured in the same run. One tenant's seals form one
 * chain, sealed one at a time under its row lock whichever process seals them, so the same pair
 * also runs with two tenants, one sent to each companion: what two processes add when their
 * work does not meet on one chain. The set-ups take turns in rounds, so the machine's drift
 * hits them alike; each figure is the median round, each ratio the median of the rounds' own.
 *
 * The server is a throwaway one (test/helpers/postgres.ts: initdb into a temp dir, unix socket
 * only) with fsync and synchronous_commit on, so its commits are as durable as SQLite's
 * synchronous=FULL and the comparison is fair. Every process (PostgreSQL, the companions, the
 * load generator) shares this machine's cores. Traffic goes to 127.0.0.1 and unix sockets only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PRODUCTION_KEY_FILE } from '../companion/core/signer.ts';
import { postgresBinDir, startPostgres } from '../test/helpers/postgres.ts';
import type { TestPostgres } from '../test/helpers/postgres.ts';
import { GATE_BODY, hasWrk, load, nodeClient, pipeline, pipelineDelta, printPipeline, seedProductionTenant, wrkLoad } from './companion-gate.ts';
import type { LoadResult, PipelineTotals } from './companion-gate.ts';
import { startCompanion } from './companion-process.ts';
import type { RunningCompanion, ServerLatency } from './companion-process.ts';
import { line, median, section } from './harness.ts';

const CONNECTIONS = 50;
const ROUNDS = 3;
const ROUND_SECONDS = 4;
const WARM_UP_SECONDS = 2;
/**
 * wrk threads for every set-up alike: two, so that with two companions (or two tenants) each
 * thread's 25 connections go to one of them; one companion gets both threads' connections.
 */
const WRK_THREADS = 2;

interface Setup {
  name: string;
  engine: 'sqlite' | 'postgres';
  /** wrk's n-th thread (the Node client's n-th target) sends to companions[n % companions] with apiKeys[n % apiKeys]. */
  companions: RunningCompanion[];
  apiKeys: string[];
  rounds: Round[];
}

interface Round {
  load: LoadResult;
  /** Each companion's own request latency during the round, in the set-up's order. */
  server: ServerLatency[];
  /** The group commits of the round, summed over the set-up's companions. */
  commits: PipelineTotals;
}

export async function benchGatePostgres(): Promise<void> {
  section(`The gate on PostgreSQL: one and two companions on one database, against one on SQLite (HTTP on loopback, ${CONNECTIONS} connections)`);
  if (postgresBinDir() === undefined) {
    line('PostgreSQL', 'skipped: install postgresql (apt-get install postgresql); no server binaries under /usr/lib/postgresql');
    return;
  }
  const wrk = hasWrk();
  line(
    'set-up',
    `${os.cpus().length} cores shared by PostgreSQL (fsync=on, synchronous_commit=on, unix socket), the companions and ` +
      (wrk ? `wrk (-t${WRK_THREADS} -c${CONNECTIONS})` : 'the Node client in this process (wrk not installed: apt-get install wrk)') +
      `; ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s, each figure the median round, each ratio the median of the rounds' ratios`,
  );
  const dirs: string[] = [];
  const companions: RunningCompanion[] = [];
  let pg: TestPostgres;
  try {
    pg = startPostgres({ durable: true });
  } catch (err) {
    // A bench, not a test: the figures before this section stand on their own.
    line('PostgreSQL', `skipped: the server did not start (${(err as Error).message.split('\n')[0]})`);
    return;
  }
  try {
    pg.psql('CREATE DATABASE gate');
    const url = `postgres:///gate?host=${encodeURIComponent(pg.socketDir)}&user=postgres`;
    const tempDir = (tag: string) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-bench-${tag}-`));
      dirs.push(dir);
      return dir;
    };
    const [sqliteDir, pgDirA, pgDirB] = [tempDir('sqlite'), tempDir('pg-a'), tempDir('pg-b')];
    const sqliteKey = await seedProductionTenant(sqliteDir);
    // Migrates the database, then leaves the tenant and the activated signing key.
    const pgKey = await seedProductionTenant(pgDirA, url);
    const pgKey2 = await seedProductionTenant(pgDirA, url);
    shareSigningKey(pgDirA, pgDirB);
    const started = await Promise.allSettled([
      startCompanion(sqliteDir),
      startCompanion(pgDirA, { SVC_DATABASE_URL: url }),
      startCompanion(pgDirB, { SVC_DATABASE_URL: url }),
    ]);
    for (const s of started) if (s.status === 'fulfilled') companions.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [onSqlite, pgA, pgB] = companions as [RunningCompanion, RunningCompanion, RunningCompanion];

    const setups: Setup[] = [
      { name: 'one companion on SQLite', engine: 'sqlite', companions: [onSqlite], apiKeys: [sqliteKey], rounds: [] },
      { name: 'one companion on PostgreSQL', engine: 'postgres', companions: [pgA], apiKeys: [pgKey], rounds: [] },
      { name: 'two companions on PostgreSQL, load split', engine: 'postgres', companions: [pgA, pgB], apiKeys: [pgKey], rounds: [] },
      { name: 'one companion on PostgreSQL, two tenants', engine: 'postgres', companions: [pgA], apiKeys: [pgKey, pgKey2], rounds: [] },
      { name: 'two companions on PostgreSQL, a tenant each', engine: 'postgres', companions: [pgA, pgB], apiKeys: [pgKey, pgKey2], rounds: [] },
    ];
    // Every companion runs throughout; one without load runs only its background workers.
    // A companion's first load is preceded by a warm-up (JIT, pool connections, caches).
    const warm = new Set<RunningCompanion>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of setups) {
        const warmUp = setup.companions.some((c) => !warm.has(c));
        setup.companions.forEach((c) => warm.add(c));
        setup.rounds.push(await measureRound(setup, wrk, warmUp));
      }
    }

    const [sqlite, one, two, oneOfTwo, twoOfTwo] = setups as [Setup, Setup, Setup, Setup, Setup];
    for (const setup of setups) printSetup(setup, setup === sqlite ? undefined : ratio(setup, sqlite));
    const ratioLine = (label: string, r: Ratio) => line(label, `${r.median.toFixed(2)}x (rounds: ${r.rounds.map((x) => x.toFixed(2)).join(', ')})`);
    ratioLine('two companions / one, on PostgreSQL, one tenant', ratio(two, one));
    ratioLine('two companions (a tenant each) / one, on PostgreSQL, two tenants', ratio(twoOfTwo, oneOfTwo));
    ratioLine('one companion, PostgreSQL / SQLite', ratio(one, sqlite));
    ratioLine('two companions on PostgreSQL / one on SQLite', ratio(two, sqlite));
  } finally {
    await Promise.all(companions.map((c) => c.stop()));
    try {
      pg.stop();
    } finally {
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

/**
 * Companions behind one balancer share one production signing custody (README: Several
 * companions on PostgreSQL). With the default file custody that is the key file, so the second
 * data directory gets a copy of the key the seed created and activated in the database; each
 * companion otherwise keeps its own data directory, as on separate machines.
 */
function shareSigningKey(fromDataDir: string, toDataDir: string): void {
  const target = path.join(toDataDir, PRODUCTION_KEY_FILE);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  fs.copyFileSync(path.join(fromDataDir, PRODUCTION_KEY_FILE), target);
  // The service refuses a key file that group or others can read.
  fs.chmodSync(target, 0o600);
}

async function measureRound(setup: Setup, wrk: boolean, warmUp: boolean): Promise<Round> {
  const urls = setup.companions.map((c) => c.url);
  const body = Buffer.from(JSON.stringify(GATE_BODY));
  const name = setup.name;
  let result: LoadResult;
  const reset = async () => {
    await Promise.all(setup.companions.map((c) => c.serverLatency()));
    return sum(await Promise.all(urls.map((u) => pipeline(u))));
  };
  let before: PipelineTotals;
  if (wrk) {
    if (warmUp) wrkLoad(urls, CONNECTIONS, setup.apiKeys, body, { threads: WRK_THREADS, warmUpSeconds: 0, seconds: WARM_UP_SECONDS });
    before = await reset();
    result = wrkLoad(urls, CONNECTIONS, setup.apiKeys, body, { threads: WRK_THREADS, warmUpSeconds: 0, seconds: ROUND_SECONDS, name });
  } else {
    const client = nodeClient(urls, CONNECTIONS, setup.apiKeys, body);
    try {
      if (warmUp) await load('warm-up', CONNECTIONS, WARM_UP_SECONDS * 1000, client.send);
      before = await reset();
      result = await load(name, CONNECTIONS, ROUND_SECONDS * 1000, client.send);
    } finally {
      client.close();
    }
  }
  const server = await Promise.all(setup.companions.map((c) => c.serverLatency()));
  const after = sum(await Promise.all(urls.map((u) => pipeline(u))));
  return { load: result, server, commits: pipelineDelta(before, after) };
}

interface Ratio {
  median: number;
  rounds: number[];
}

/**
 * a's rate over b's, round by round: a round's set-ups ran seconds apart on the same machine,
 * so a round's ratio cancels most of the drift between rounds; the median drops an outlier.
 */
function ratio(a: Setup, b: Setup): Ratio {
  const rounds = a.rounds.map((r, i) => r.load.rate / b.rounds[i]!.load.rate);
  return { median: median(rounds), rounds };
}

function sum(totals: PipelineTotals[]): PipelineTotals {
  return totals.reduce((a, b) => ({
    batches: a.batches + b.batches,
    seals: a.seals + b.seals,
    commitSeconds: a.commitSeconds + b.commitSeconds,
    durableSeconds: a.durableSeconds + b.durableSeconds,
  }));
}

/** The set-up's median round (by rate): the client's figures, the servers' own, the group commits. */
function printSetup(setup: Setup, againstSqlite: Ratio | undefined): void {
  const sorted = [...setup.rounds].sort((a, b) => a.load.rate - b.load.rate);
  const r = sorted[sorted.length >> 1]!;
  const l = r.load;
  line(
    setup.name,
    `${Math.round(l.rate).toLocaleString('en-US')} sealed/s (${againstSqlite ? `${againstSqlite.median.toFixed(2)}x one companion on SQLite` : 'baseline'}), ` +
      `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms` +
      (l.errors ? `, ${l.errors} non-201 answers` : '') +
      ` (rounds: ${setup.rounds.map((x) => Math.round(x.load.rate).toLocaleString('en-US')).join(', ')}/s)`,
  );
  line(
    '  of which inside the server',
    r.server
      .map((s, i) => `${r.server.length > 1 ? `companion ${i + 1}: ` : ''}p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms (${s.n} requests)`)
      .join('; '),
  );
  printPipeline(r.commits, setup.engine === 'sqlite' ? 'sealing-thread' : 'postgres');
}
