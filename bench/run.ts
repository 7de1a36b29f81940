/**
 * `npm run bench`: every benchmark, each figure as a ratio to a baseline measured in this run.
 * `npm run bench -- <group>` runs one group: core, gate (gate-cpu: its CPU per decision alone; gate-postgres: one tenant's rate on PostgreSQL against SQLite alone), extension, input, storage, anchoring, webhooks, routing, exports or seal-engines.
 */
import os from 'node:os';
import { benchAnchoring } from './anchoring.ts';
import { benchCompanionGate } from './companion-gate.ts';
import { benchEvidenceCore } from './evidence-core.ts';
import { benchGateCpu } from './gate-cpu.ts';
import { benchExtensionLatency } from './extension-latency.ts';
import { benchExports } from './exports.ts';
import { benchGatePostgres } from './gate-postgres.ts';
import { benchInput } from './input.ts';
import { benchRouting } from './routing.ts';
import { benchSealEngines } from './seal-engines.ts';
import { benchStorage } from './storage.ts';
import { benchWebhooks } from './webhooks.ts';

const groups: Record<string, () => Promise<void>> = {
  core: benchEvidenceCore,
  gate: async () => {
    await benchGateCpu();
    await benchCompanionGate();
    await benchGatePostgres();
  },
  'gate-cpu': benchGateCpu,
  'gate-postgres': benchGatePostgres,
  extension: benchExtensionLatency,
  input: benchInput,
  storage: benchStorage,
  anchoring: benchAnchoring,
  webhooks: benchWebhooks,
  routing: benchRouting,
  exports: benchExports,
  'seal-engines': benchSealEngines,
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !(w in groups));
if (unknown.length > 0) {
  console.error(`unknown benchmark group(s): ${unknown.join(', ')}; choose from ${Object.keys(groups).join(', ')}`);
  process.exit(2);
}

console.log(`Action Gate benchmarks — node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString()}`);
console.log('Figures are medians; compare ratios, not absolute numbers, across machines.');
for (const [name, run] of Object.entries(groups)) {
  if (wanted.length === 0 || wanted.includes(name)) await run();
}
