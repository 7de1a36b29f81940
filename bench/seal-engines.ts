/**
 * One tenant's seal rate on each engine, in one run: the real sealer (evidence/sealer.ts) with
 * the service's participants, in this process, sealing gate decisions of one production tenant
 * as fast as SEALERS callers keep it busy, first on the embedded SQLite file (synchronous=FULL,
 * its fsync off the event loop), then on PostgreSQL (fsync and synchronous_commit on, unix
 * socket); alternating rounds, each figure the median round, the ratio the median of the
 * rounds' own. No HTTP: what is compared is the seal path, where the engines differ (the
 * statements of a batch and the round trips they cost under the tenant's lock).
 *
 * The seals are the gate bench's: a law request paused for review, so each seal also opens a
 * review item and records its submitter.
 *
 * On PostgreSQL it also counts, on the sealer's connections, the statements sent and the round
 * trips waited for (test/helpers/postgres-round-trips.ts: writes made once every statement
 * sent was answered), per batch, and measures the batches as they were before (PostgresStoreOptions
 * writeBehind): with only records and tree nodes written behind and nothing read ahead ('records'),
 * and with a statement per row (false), so each gain is a ratio of the same run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { AuthContext } from '../companion/core/auth.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import type { Pool } from '../companion/core/postgres/connect.ts';
import { closeDeps, openDeps } from '../companion/deps.ts';
import type { AppDeps } from '../companion/deps.ts';
import { Sealer } from '../companion/evidence/sealer.ts';
import type { SealPipeline, SealRequest } from '../companion/evidence/sealer.ts';
import { createPostgresStore } from '../companion/postgres-store.ts';
import { sealParticipants } from '../companion/seal-participants.ts';
import { sha256Hex } from '../shared/hash.ts';
import { postgresBinDir, startPostgres } from '../test/helpers/postgres.ts';
import { roundTrips } from '../test/helpers/postgres-round-trips.ts';
import type { RoundTrips } from '../test/helpers/postgres-round-trips.ts';
import type { TestPostgres } from '../test/helpers/postgres.ts';
import { productionTenant } from './companion-gate.ts';
import { line, median, section } from './harness.ts';

/** Callers each keeping one seal in flight: a gate under load, without the HTTP. */
const SEALERS = 64;
const ROUNDS = 3;
const ROUND_MS = 3000;
const WARM_UP_MS = 1000;

interface Engine {
  name: string;
  sealer: SealPipeline;
  auth: AuthContext;
  rates: number[];
  /** PostgreSQL: statements sent, round trips waited for, seals and batches committed, over the measured rounds. */
  counts?: { trips: RoundTrips; seals: number; batches: number };
}

/** A production tenant on `deps`' store, as an upgrade leaves it. */
async function productionAuth(deps: AppDeps): Promise<AuthContext> {
  const { tenantId, keyId } = await productionTenant(deps);
  return { tenantId, tenantKind: 'production', keyId };
}

let n = 0;
/** A gate decision as the law pack seals the gate bench's request: paused for review, metered, answered from its record. */
function gateSeal(auth: AuthContext): SealRequest {
  return {
    auth,
    vertical: 'law',
    actionType: 'draft_reply',
    pack: 'law',
    kind: 'gate',
    decision: 'needs_review',
    status: 'needs_review',
    reviewRoute: 'supervising_attorney',
    payloadHash: sha256Hex(`bench seal ${n++}`),
    manifestDigest: sha256Hex('manifest'),
    policyDigest: sha256Hex('policy'),
    context: { rule_ids: ['law.competence'], engine_version: 'bench' },
    details: { next_step: 'proceed', catalog_refs: ['law.competence'] },
    metering: { counted: true, credits: 1 },
    pauseForReview: { actionType: 'draft_reply', nextStep: 'wait_for_review', windowSeconds: 86_400, rule: null },
    respond: (record) => ({ action_key: record.actionKey, tenant_seq: record.tenantSeq, evidence_packet: record.packet }),
  };
}

/** Seals for `ms` with SEALERS callers; the rate of answered seals. */
async function run(engine: Engine, ms: number): Promise<number> {
  let sealed = 0;
  const until = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: SEALERS }, async () => {
      while (performance.now() < until) {
        await engine.sealer.seal(gateSeal(engine.auth));
        sealed++;
      }
    }),
  );
  return sealed / ((performance.now() - started) / 1000);
}

export async function benchSealEngines(): Promise<void> {
  section(`One tenant's seals through the sealer: PostgreSQL against SQLite (${SEALERS} callers, no HTTP)`);
  if (postgresBinDir() === undefined) {
    line('PostgreSQL', 'skipped: install postgresql (apt-get install postgresql); no server binaries under /usr/lib/postgresql');
    return;
  }
  const dirs: string[] = [];
  const tempDir = (tag: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-bench-${tag}-`));
    dirs.push(dir);
    return dir;
  };
  const opened: AppDeps[] = [];
  let pg: TestPostgres | undefined;
  const pools: Pool[] = [];
  try {
    pg = startPostgres({ durable: true });
    pg.psql('CREATE DATABASE seals');
    const url = `postgres:///seals?host=${encodeURIComponent(pg.socketDir)}&user=postgres`;
    // The request thread's sealer on SQLite, as on PostgreSQL: the engines, not the threads, compared.
    const onSqlite = await openDeps(loadConfig({ SVC_DATA_DIR: tempDir('sqlite'), SVC_SEAL_THREAD: '0' }, []), { log: createMemoryLogger() });
    opened.push(onSqlite);
    const onPostgres = await openDeps(loadConfig({ SVC_DATA_DIR: tempDir('pg'), SVC_DATABASE_URL: url }, []), { log: createMemoryLogger() });
    opened.push(onPostgres);

    // Each PostgreSQL sealer gets its own pool, as core/postgres/connect.ts opens one, counting
    // the statements it sends; and its own tenant, so the two never wait on one row lock.
    let counting = false;
    const onPostgresEngine = async (name: string, writeBehind: boolean | 'records'): Promise<Engine> => {
      const counts = { trips: roundTrips(pg!.socketDir), seals: 0, batches: 0 };
      // `socket`: the driver's documented option its type declarations leave out.
      const options = {
        user: 'postgres',
        max: 10,
        socket: counts.trips.socket,
        onnotice: () => {},
        types: { bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (s: string) => Number(s) } },
      };
      const pool = postgres(`postgres:///seals`, options as never) as unknown as Pool;
      pools.push(pool);
      const sealer = new Sealer({
        store: createPostgresStore(pool, undefined, { writeBehind }),
        participants: sealParticipants({ outbox: onPostgres.webhooks.outbox, routing: onPostgres.routing.participant }),
        keyring: onPostgres.keyring,
        clock: onPostgres.clock,
        ids: onPostgres.ids,
        observer: {
          committed: ({ sealed }) => {
            if (!counting) return;
            counts.batches++;
            counts.seals += sealed.length;
          },
        },
      });
      return { name, sealer, auth: await productionAuth(onPostgres), rates: [], counts };
    };
    const sqlite: Engine = { name: 'SQLite', sealer: onSqlite.sealer, auth: await productionAuth(onSqlite), rates: [] };
    const behind = await onPostgresEngine('PostgreSQL', true);
    const recordsBehind = await onPostgresEngine('PostgreSQL, only records and nodes behind, nothing read ahead (before)', 'records');
    const rowByRow = await onPostgresEngine('PostgreSQL, each row a statement', false);
    const engines = [sqlite, behind, recordsBehind, rowByRow];
    line(
      'set-up',
      `${os.cpus().length} cores shared by PostgreSQL (fsync=on, synchronous_commit=on, unix socket) and this process; ` +
        `${ROUNDS} alternating rounds of ${ROUND_MS / 1000} s per engine after a ${WARM_UP_MS / 1000} s warm-up`,
    );
    for (const engine of engines) await run(engine, WARM_UP_MS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const engine of engines) {
        counting = engine.counts !== undefined;
        if (engine.counts) engine.counts.trips.counting = true;
        engine.rates.push(await run(engine, ROUND_MS));
        if (engine.counts) engine.counts.trips.counting = false;
        counting = false;
      }
    }
    for (const engine of engines) {
      const c = engine.counts;
      line(
        engine.name,
        `${Math.round(median(engine.rates)).toLocaleString('en-US')} sealed/s (rounds: ${engine.rates.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')}/s)` +
          (c
            ? `; per batch of ${(c.seals / c.batches).toFixed(1)} seals ${(c.trips.statements / c.batches).toFixed(1)} statements, ` +
              `${(c.trips.roundTrips / c.batches).toFixed(1)} round trips (${(c.trips.statements / c.seals).toFixed(2)} statements per seal)`
            : ''),
      );
    }
    const ratio = (a: Engine, b: Engine) => {
      const rounds = a.rates.map((r, i) => r / b.rates[i]!);
      return `${median(rounds).toFixed(2)}x (rounds: ${rounds.map((x) => x.toFixed(2)).join(', ')})`;
    };
    line('one tenant, PostgreSQL / SQLite', ratio(behind, sqlite));
    line('one tenant, PostgreSQL before (records and nodes behind) / SQLite', ratio(recordsBehind, sqlite));
    line('one tenant, PostgreSQL a statement per row / SQLite', ratio(rowByRow, sqlite));
    line('PostgreSQL / PostgreSQL before', ratio(behind, recordsBehind));
  } finally {
    for (const deps of opened) await closeDeps(deps);
    for (const pool of pools) await pool.end();
    try {
      pg?.stop();
    } finally {
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}
