/**
 * `npm run bench -- storage`: bytes stored per sealed action, by table (SQLite dbstat: pages
 * actually used, indexes included), for law gate decisions that each carry an idempotency key,
 * the heaviest common path. The baseline is the sealed record itself (table sealed_records and
 * its indexes): every other table's figure reads as a share of it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from '../companion/app.ts';
import { loadConfig } from '../companion/core/config.ts';
import { createMemoryLogger } from '../companion/core/log.ts';
import { closeDeps, openSqliteDeps } from '../companion/deps.ts';
import { seedProductionTenant } from './companion-gate.ts';
import { line, section } from './harness.ts';

const ACTIONS = 2000;

export async function benchStorage(): Promise<void> {
  section(`storage: bytes per sealed action over ${ACTIONS} law gate decisions with idempotency keys`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-storage-'));
  const apiKey = await seedProductionTenant(dataDir);
  const deps = await openSqliteDeps(loadConfig({ SVC_DATA_DIR: dataDir }, []), { log: createMemoryLogger() });
  try {
    const app = createApp(deps);
    const before = tableBytes(deps.store.db);
    for (let i = 0; i < ACTIONS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) =>
          app.request('/v1/gate', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
            body: JSON.stringify({
              pack: 'law',
              proposed_action: `Draft a reply to opposing counsel about the discovery schedule in matter ${i + j}.`,
              law_context: { matter_band: 'moderate', tool_id: 'drafting-assistant', doctrine_anchor: 'competence', jurisdiction: 'US-NY' },
              idempotency_key: `bench-${i + j}`,
            }),
          }),
        ),
      );
    }
    const after = tableBytes(deps.store.db);
    const grown = [...after].map(([name, bytes]) => [name, (bytes - (before.get(name) ?? 0)) / ACTIONS] as const).filter(([, b]) => b > 0);
    const baseline = grown.filter(([n]) => n.startsWith('sealed_records')).reduce((s, [, b]) => s + b, 0);
    const total = grown.reduce((s, [, b]) => s + b, 0);
    line('sealed record (baseline)', `${Math.round(baseline)} B`);
    for (const [name, bytes] of grown.sort((a, b) => b[1] - a[1])) line(name, `${Math.round(bytes)} B, ${(bytes / baseline).toFixed(2)}x baseline`);
    line('total per sealed action', `${Math.round(total)} B, ${(total / baseline).toFixed(2)}x baseline`);
  } finally {
    await closeDeps(deps);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Bytes in use per table and index (dbstat, SQLite's own page accounting). */
function tableBytes(db: { prepare(sql: string): { all(): unknown[] } }): Map<string, number> {
  const rows = db.prepare('SELECT name, sum(pgsize - unused) AS bytes FROM dbstat GROUP BY name').all() as { name: string; bytes: number }[];
  return new Map(rows.map((r) => [r.name, r.bytes]));
}
