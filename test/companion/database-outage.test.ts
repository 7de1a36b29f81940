/**
 * The database stops serving while the companion runs: PostgreSQL is shut down and started
 * again, ends the companion's sessions mid-load (as a failover does), or takes no writes (as a
 * standby); SQLite's file can grow no more (a full disk, here SQLite's own max_page_count).
 * Every write meanwhile is answered 503 `database_unavailable` with Retry-After, never 500;
 * readiness says which check fails; the companion serves again by itself once the database
 * does; and a write retried with its idempotency_key is sealed once, in one unbroken chain.
 */
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { databaseUnavailableCode } from '../../companion/core/database-unavailable.ts';
import { toWire } from '../../companion/seal-thread/protocol.ts';
import { start, tempDataDir } from '../helpers/companion-process.ts';
import type { Companion } from '../helpers/companion-process.ts';
import { GATE, gateDatabase } from '../helpers/gate-database.ts';
import { expectOneUnbrokenChain, logEntries, TENANT_LOG_SQL } from '../helpers/tenant-log.ts';
import type { LogEntry, LogRow } from '../helpers/tenant-log.ts';
import { freshTenantContext } from './helpers.ts';
import type { TestResponse } from './helpers.ts';

interface Answer {
  status: number;
  headers: Headers;
  body: { code?: string; detail?: string; action_key?: string };
}

async function gate(c: Companion, apiKey: string, idempotencyKey?: string): Promise<Answer> {
  const res = await fetch(`${c.url}/v1/gate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
    body: JSON.stringify({ ...GATE, ...(idempotencyKey ? { idempotency_key: idempotencyKey } : {}) }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

function expectUnavailable(answer: Answer): void {
  expect(answer.status).toBe(503);
  expect(answer.headers.get('content-type')).toBe('application/problem+json');
  expect(answer.headers.get('retry-after')).toBe('2');
  expect(answer.body.code).toBe('database_unavailable');
  expect(answer.body.detail).toMatch(/^the database is unavailable \([A-Z0-9_]+\); retry later/);
}

/** Resolves once the worker `name` of `c` has finished `n` failed rounds, as its worker plan shows them. */
async function failedRounds(c: Companion, name: string, n: number): Promise<void> {
  const seen = new Set<string>();
  await vi.waitUntil(
    async () => {
      const plan = (await (await fetch(`${c.url}/deployment/worker-plan`)).json()) as { workers: { name: string; last_round_at: string | null; last_round_failed: boolean }[] };
      const worker = plan.workers.find((w) => w.name === name);
      if (worker?.last_round_failed && worker.last_round_at !== null) seen.add(worker.last_round_at);
      return seen.size >= n;
    },
    { timeout: 20_000, interval: 50 },
  );
}

describe('on PostgreSQL', () => {
  const db = gateDatabase();
  const PAUSED = /"level":"warn","message":"worker paused: database unavailable".*"queue":"webhook_deliveries"/;

  let tenants = 0;
  async function companionWithTenant(): Promise<{ c: Companion; apiKey: string; tenantLog: () => LogEntry[] }> {
    const c = await start(tempDataDir(), { SVC_DATABASE_URL: db.url() });
    const { tenantId, apiKey } = db.productionTenant(`ten_outage_${++tenants}`);
    return { c, apiKey, tenantLog: () => db.tenantLog(tenantId) };
  }

  it('answers 503 while the server is down, says so in readiness and the log, and serves again once it is back', async () => {
    const { c, apiKey, tenantLog } = await companionWithTenant();
    expect((await gate(c, apiKey)).status).toBe(201);

    db.server().shutDown();
    try {
      const refused = await gate(c, apiKey, 'while-down');
      expectUnavailable(refused);
      const ready = await fetch(`${c.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: Record<string, { ok: boolean }> }).checks.database_writable!.ok).toBe(false);
      await c.waitForLog(/"level":"warn","message":"database unavailable".*"route":"\/v1\/gate"/);
      // The delivery worker polls twice a second: its outage is one line, however many rounds fail.
      await c.waitForLog(PAUSED);
      await failedRounds(c, 'webhooks', 3);
    } finally {
      db.server().startAgain();
    }

    // The same companion, not restarted: the retried write is sealed once.
    const retried = await gate(c, apiKey, 'while-down');
    expect(retried.status).toBe(201);
    expect((await gate(c, apiKey, 'while-down')).headers.get('idempotent-replayed')).toBe('true');
    // Ready again once the worker's next round succeeds: readiness reports its failed one till then.
    await c.waitForLog(/"level":"info","message":"worker resumed: database available".*"queue":"webhook_deliveries"/);
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    const log = tenantLog();
    expect(log).toHaveLength(2);
    expectOneUnbrokenChain(log);
    expect(c.stdout().match(new RegExp(PAUSED, 'g'))).toHaveLength(1);
    expect(c.stdout()).not.toMatch(/"level":"error"/);
  });

  it('answers writes 503 and reads as before while the database takes no writes, as a standby does after a failover', async () => {
    const { c, apiKey, tenantLog } = await companionWithTenant();
    const first = await gate(c, apiKey);
    expect(first.status).toBe(201);
    /** Every new session on `gate` starts read-only (or not), and the open ones are ended, so the pool reconnects. */
    const readOnly = (on: boolean) =>
      db.server().psql(`ALTER DATABASE gate ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'};
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'gate';`);
    /** The answer once the pool has reconnected: a request may first meet a connection the server just cut. */
    const afterReconnect = async () => {
      for (let i = 0; ; i++) {
        const answer = await gate(c, apiKey, 'on-standby');
        if (i === 5 || !/\((CONNECTION_CLOSED|ECONNRESET|EPIPE|57P01)\)/.test(answer.body.detail ?? '')) return answer;
      }
    };
    readOnly(true);
    try {
      const refused = await afterReconnect();
      expectUnavailable(refused);
      expect(refused.body.detail).toContain('(25006)');
      const read = await fetch(`${c.url}/v1/records/${first.body.action_key}`, { headers: { 'x-service-key': apiKey } });
      expect(read.status).toBe(200);
      expect(((await (await fetch(`${c.url}/readyz`)).json()) as { checks: Record<string, { ok: boolean }> }).checks.database_writable!.ok).toBe(false);
    } finally {
      readOnly(false);
    }
    expect((await afterReconnect()).status).toBe(201);
    const log = tenantLog();
    expect(log).toHaveLength(2);
    expectOneUnbrokenChain(log);
  });

  it('answers 201 or 503, never 500, when the server ends every session mid-load, and loses no acknowledged seal', async () => {
    const { c, apiKey, tenantLog } = await companionWithTenant();
    const answers: { key: string; answer: Answer }[] = [];
    const worker = async (w: number) => {
      for (let i = 0; i < 30; i++) {
        const key = `load-${w}-${i}`;
        answers.push({ key, answer: await gate(c, apiKey, key) });
      }
    };
    let loaded = false;
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => worker(w))).finally(() => (loaded = true));
    /** Until `n` answers have come, or the load is over. */
    const answered = (n: number) => vi.waitUntil(() => loaded || answers.length >= n, { timeout: 60_000, interval: 5 });
    await answered(20);
    // Three cuts, each once the load has gone on past the one before.
    for (let i = 0; i < 3; i++) {
      db.server().psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'gate'`);
      await answered(answers.length + 2);
    }
    await load;

    const refused = answers.filter((a) => a.answer.status !== 201);
    for (const { answer } of refused) expectUnavailable(answer);
    // Each refused write, sent again with its key, is sealed now or answers what was stored.
    for (const { key } of refused) expect((await gate(c, apiKey, key)).status).toBe(201);
    const log = tenantLog();
    expectOneUnbrokenChain(log);
    expect(log).toHaveLength(answers.length);
    const acknowledged = answers.filter((a) => a.answer.status === 201).map((a) => a.answer.body.action_key);
    const sealed = new Set(log.map((e) => e.action_key));
    for (const key of acknowledged) expect(sealed.has(key!)).toBe(true);
  });
});

describe('on SQLite', () => {
  it('answers 503 while the file can grow no more, stores no part of a refused batch, and seals the retries once it can', async () => {
    const { ctx, key: apiKey, tenantId } = await freshTenantContext();
    try {
      const send = (idempotencyKey: string) => ctx.request('/v1/gate', { key: apiKey, json: { ...GATE, idempotency_key: idempotencyKey } });
      const tenantLog = async () => logEntries(await ctx.sql<LogRow>(TENANT_LOG_SQL, tenantId));
      const first = await send('before');
      expect(first.status).toBe(201);

      // The file may grow no further: the next page a write needs is refused with SQLITE_FULL,
      // and SQLite then rolls back the whole batch transaction by itself.
      const pages = ctx.store.db.pragma('page_count', { simple: true }) as number;
      ctx.store.db.pragma(`max_page_count = ${pages}`);
      const answers: { key: string; res: TestResponse }[] = [];
      // Eight at once: one batch, so seals before and after the refused one share its transaction.
      for (let round = 0; round < 20 && answers.every((a) => a.res.status === 201); round++) {
        const keys = Array.from({ length: 8 }, (_, i) => `full-${round}-${i}`);
        answers.push(...(await Promise.all(keys.map(async (key) => ({ key, res: await send(key) })))));
      }
      const refused = answers.filter((a) => a.res.status !== 201);
      expect(refused.length).toBeGreaterThan(0);
      for (const { res } of refused) {
        expectUnavailable({ status: res.status, headers: res.headers, body: res.body });
        expect(res.body.detail).toContain('(SQLITE_FULL)');
      }
      expect(ctx.log.entries.filter((e) => e.level === 'error')).toEqual([]);
      expect(ctx.log.entries).toContainEqual(expect.objectContaining({ level: 'warn', message: 'database unavailable' }));
      // Exactly the acknowledged seals are stored, in one unbroken chain.
      let log = await tenantLog();
      expectOneUnbrokenChain(log);
      expect(log.map((e) => e.action_key).sort()).toEqual(
        [first.body.action_key, ...answers.filter((a) => a.res.status === 201).map((a) => a.res.body.action_key)].sort(),
      );

      ctx.store.db.pragma(`max_page_count = ${pages * 1000}`);
      for (const { key } of refused) expect((await send(key)).status).toBe(201);
      log = await tenantLog();
      expectOneUnbrokenChain(log);
      expect(log).toHaveLength(1 + answers.length);
    } finally {
      await ctx.close();
    }
  });

  it('crosses from the sealing thread as the same 503, and leaves other errors internal', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (x TEXT)');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    let full: unknown;
    try {
      db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000));
    } catch (err) {
      full = err;
    }
    db.close();
    expect(databaseUnavailableCode(full)).toBe('SQLITE_FULL');
    expect(toWire(full)).toMatchObject({ problem: { status: 503, code: 'database_unavailable', headers: { 'retry-after': '2' } } });
    // A file's ENOENT is not the database's socket; a constraint is our fault, not an outage.
    expect(databaseUnavailableCode(Object.assign(new Error('no such file'), { code: 'ENOENT', syscall: 'open' }))).toBeUndefined();
    expect(databaseUnavailableCode(Object.assign(new Error('unique'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBeUndefined();
    expect(toWire(new Error('boom'))).toEqual({ message: 'boom' });
  });
});
