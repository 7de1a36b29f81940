#!/usr/bin/env node
// Package bin for the offline verifier: plain node on the compiled verifier (`npm run build`,
// run by `npm install`), so it needs no TypeScript loader.
import { main } from '../../dist/companion/cli/verify.js';

try {
  process.exit(await main(process.argv.slice(2)));
} catch (e) {
  console.error(`svc-verify: unexpected failure: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
