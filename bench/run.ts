/**
 * `npm run bench`: every benchmark, each figure as a ratio to a baseline measured in this run.
 * `npm run bench -- core`, `-- gate`, `-- extension`, `-- input` or `-- storage` runs one group.
 */
import os from 'node:os';
import { benchCompanionGate } from './companion-gate.ts';
import { benchEvidenceCore } from './evidence-core.ts';
import { benchExtensionLatency } from './extension-latency.ts';
import { benchInput } from './input.ts';
import { benchStorage } from './storage.ts';

const groups: Record<string, () => Promise<void>> = { core: benchEvidenceCore, gate: benchCompanionGate, extension: benchExtensionLatency, input: benchInput, storage: benchStorage };
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
