// The sealing thread's entry when the companion runs from source (tests, `npm run dev`): a
// worker thread on Node 20 does not inherit its parent's TypeScript loader, so this plain
// module loads ./thread.ts through tsx itself. Built, the thread starts at thread.js instead.
import { tsImport } from 'tsx/esm/api';

await tsImport('./thread.ts', import.meta.url);
