/** `npm run bench`: every benchmark, each figure as a ratio to a baseline measured in this run. */
import { benchEvidenceCore } from './evidence-core.ts';

console.log(`Action Gate benchmarks — node ${process.version}, ${new Date().toISOString()}`);
console.log('Figures are medians; compare ratios, not absolute numbers, across machines.');
await benchEvidenceCore();
