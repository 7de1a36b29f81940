/**
 * `npm run bench -- exports`: the records export over 1,000,000 sealed records.
 *
 * Setup writes the rows straight through the evidence store in large transactions (copies of
 * one real production seal with their own action_key, tenant_seq and recorded_at; signing a
 * million seals would measure the signer, not the export). Then, in the same run:
 *   baseline  a raw SQLite scan of the same rows in export order (better-sqlite3 .iterate(),
 *             every column read, nothing built): the floor any export pays;
 *   export    GET /tenant/exports/records as NDJSON through the real app, page by page until a
 *             page comes back empty, every byte of every body read.
 * Both run in a fresh process (bench/exports-measure.mjs, over the compiled service in dist/)
 * that opens the prepared database, so
 * its peak RSS is the export's own, not the setup's garbage: the export runs first, then the
 * scan, then each once more, and each rate is the better of its two runs. Printed: records/s of each, their
 * ratio, and the measuring process's peak RSS. Targets (issue): >= 0.5x the raw scan,
 * >= 50,000 records/s, peak RSS <= 150 MB. SVC_BENCH_EXPORT_RECORDS overrides the count.
 */
import { startNodeFlags } from '../scripts/start-command.mjs';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { catchUpTenantLogs } from '../companion/anchoring/tenant-log.ts';
import { createApp } from '../companion/app.ts';
import { generateApiKey } from '../companion/core/auth.ts';
import { ManualClock } from '../companion/core/clock.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../companion/deps.ts';
import type { SealedRecordRow } from '../companion/evidence/store.ts';
import { compare, line, section } from './harness.ts';

/** What bench/exports-measure.mjs prints. */
interface Measurement {
  rssBefore: number;
  raw: { rows: number; perSec: number };
  exported: { records: number; pages: number; bytes: number; peakRss: number; perSec: number };
}

const RECORDS = Number(process.env.SVC_BENCH_EXPORT_RECORDS ?? 1_000_000);
const INSERT_BATCH = 50_000;

export async function benchExports(): Promise<void> {
  section(`Records export: ${RECORDS.toLocaleString('en-US')} sealed records`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-exports-'));
  const clock = new ManualClock('2026-01-01T00:00:00.000Z');
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir, PORT: '0' }, []), { clock, log: createMemoryLogger() });
  let closed = false;
  try {
    const { tenantId, apiKey } = await productionTenant(deps);
    const template = await realSeal(deps, tenantId, apiKey);
    const setupStart = performance.now();
    await insertCopies(deps, template, RECORDS);
    line('setup', `${RECORDS.toLocaleString('en-US')} rows inserted in ${((performance.now() - setupStart) / 1000).toFixed(1)} s`);

    // The copies bypassed the sealer: give the tenant log their leaves here, as a restart would,
    // so the measuring process opens a caught-up database and measures only the export.
    await catchUpTenantLogs(deps.store);
    await deps.store.withConnection((db) => db.pragma('wal_checkpoint(TRUNCATE)'));
    await closeDeps(deps);
    closed = true;
    const m = measureInChild(dataDir, tenantId, apiKey);
    compare({ name: 'raw SQLite scan (same rows, export order)', opsPerSec: m.raw.perSec }, { name: 'GET /tenant/exports/records (NDJSON, all pages)', opsPerSec: m.exported.perSec });
    line('export', `${m.exported.records.toLocaleString('en-US')} records, ${m.exported.pages} pages, ${(m.exported.bytes / 1e6).toFixed(0)} MB of NDJSON`);
    line('peak RSS of the exporting process', `${mb(m.exported.peakRss)} MB (after opening: ${mb(m.rssBefore)} MB; target <= 150 MB)`);
  } finally {
    if (!closed) await closeDeps(deps);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

type Deps = Awaited<ReturnType<typeof openSqliteDeps>>;

async function productionTenant(deps: Deps): Promise<{ tenantId: string; apiKey: string }> {
  const now = deps.clock.now().toISOString();
  const tenantId = deps.ids.next('ten');
  const key = generateApiKey('production');
  await deps.store.transaction(async (tx) => {
    deps.store.db
      .prepare("INSERT INTO tenants (id, kind, display_name, retain_statutory_metadata, created_at, updated_at) VALUES (?, 'production', 'Bench tenant', 0, ?, ?)")
      .run(tenantId, now, now);
    await tx.tenants.addApiKey({ id: deps.ids.next('key'), tenantId, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour, createdAt: now });
  });
  return { tenantId, apiKey: key.key };
}

/** One real production seal through the app, so every copied row has a real seal's shape and size. */
async function realSeal(deps: Deps, tenantId: string, apiKey: string): Promise<SealedRecordRow> {
  const app = createApp(deps);
  const body = { pack: 'eu-ai-act', event_type: 'output_marked', occurred_at: '2026-01-01T00:00:00.000Z', source_payload: { content_sha256: 'a'.repeat(64) } };
  const res = await app.request('/v1/record', { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': apiKey }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`seal failed: ${res.status} ${await res.text()}`);
  const { action_key } = (await res.json()) as { action_key: string };
  const row = (await deps.store.evidence.findRecord(tenantId, action_key))!;
  await deps.store.withConnection((db) => db.prepare('DELETE FROM sealed_records WHERE action_key = ?').run(action_key));
  return row;
}

async function insertCopies(deps: Deps, t: SealedRecordRow, n: number): Promise<void> {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const prefix = t.actionKey.slice(0, t.actionKey.lastIndexOf(':') + 1);
  for (let from = 0; from < n; from += INSERT_BATCH) {
    await deps.store.transaction(async (tx) => {
      for (let i = from; i < Math.min(n, from + INSERT_BATCH); i++) {
        // Ten records per millisecond: the export's keyset must order ties by tenant_seq.
        const recordedAt = new Date(start + Math.floor(i / 10)).toISOString();
        await tx.evidence.insertRecord({ ...t, tenantSeq: i, actionKey: `${prefix}${String(i).padStart(26, '0')}`, recordedAt });
      }
    });
    // No checkpoint worker runs here: keep the WAL from growing to the size of the table.
    await deps.store.withConnection((db) => db.pragma('wal_checkpoint(TRUNCATE)'));
  }
}

function measureInChild(dataDir: string, tenantId: string, apiKey: string): Measurement {
  // The measuring process runs the compiled service, as `npm start` does: build it first.
  const root = fileURLToPath(new URL('..', import.meta.url));
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed (${build.status}): ${build.stderr}`);
  // With the node flags `npm start` uses (scripts/start-command.mjs): they size the heap.
  const child = spawnSync(process.execPath, [...startNodeFlags(), fileURLToPath(new URL('./exports-measure.mjs', import.meta.url)), dataDir, tenantId], {
    env: { ...process.env, SVC_API_KEY: apiKey },
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`measuring process failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as Measurement;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
