/**
 * The measuring half of `npm run bench -- exports` (see bench/exports.ts), run as a fresh
 * process on the prepared database: argv = <data dir> <tenant id>, SVC_API_KEY = the tenant's
 * key. Prints one JSON Measurement (bench/exports.ts) on stdout.
 *
 * Plain JavaScript over the compiled service in dist/, run by node alone: what `npm start`
 * runs, so the peak RSS is the service's own and not the TypeScript loader's (which keeps a
 * second V8 isolate of about 50 MB).
 */
import { createApp } from '../dist/companion/app.js';
import { loadConfig } from '../dist/companion/core/config.js';
import { createMemoryLogger } from '../dist/companion/core/log.js';
import { closeDeps, openDeps } from '../dist/companion/deps.js';
import { NDJSON } from '../dist/companion/exports/records-export.js';

function rawScan(deps, tenantId) {
  const stmt = deps.store.db.prepare('SELECT * FROM sealed_records WHERE tenant_id = ? ORDER BY recorded_at, tenant_seq');
  const startedAt = performance.now();
  let rows = 0;
  for (const _ of stmt.iterate(tenantId)) rows++;
  return { rows, perSec: (rows * 1000) / (performance.now() - startedAt) };
}

async function exportAll(app, apiKey) {
  let cursor = null;
  let records = 0;
  let pages = 0;
  let bytes = 0;
  let peakRss = process.memoryUsage().rss;
  const startedAt = performance.now();
  for (;;) {
    const res = await app.request(`/tenant/exports/records${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`, {
      headers: { accept: NDJSON, 'x-service-key': apiKey },
    });
    if (res.status !== 200) throw new Error(`export answered ${res.status}`);
    pages++;
    for await (const chunk of res.body) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) records++;
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    cursor = res.headers.get('x-next-cursor');
    if (!cursor) break;
  }
  return { records, pages, bytes, peakRss, perSec: (records * 1000) / (performance.now() - startedAt) };
}

async function main() {
  const [dataDir, tenantId] = process.argv.slice(2);
  const apiKey = process.env.SVC_API_KEY;
  if (!dataDir || !tenantId || !apiKey) throw new Error('usage: exports-measure.ts <data dir> <tenant id> (SVC_API_KEY set)');
  const deps = await openDeps(loadConfig({ SVC_DATA_DIR: dataDir, PORT: '0' }, []), { log: createMemoryLogger() });
  try {
    const rssBefore = process.memoryUsage().rss;
    // Export first, so its peak RSS is its own and not the raw scan's garbage; then the two
    // alternate once more (the machine is shared and drifts) and each rate is the better run.
    const app = createApp(deps);
    const first = await exportAll(app, apiKey);
    const raw = [rawScan(deps, tenantId)];
    const second = await exportAll(app, apiKey);
    raw.push(rawScan(deps, tenantId));
    if (first.records !== raw[0].rows) throw new Error(`export returned ${first.records} records, the table holds ${raw[0].rows}`);
    const best = (a, b) => (a.perSec >= b.perSec ? a : b);
    const exported = { ...best(first, second), peakRss: first.peakRss };
    const m = { rssBefore, raw: best(raw[0], raw[1]), exported };
    process.stdout.write(JSON.stringify(m));
  } finally {
    await closeDeps(deps);
  }
}

await main();
