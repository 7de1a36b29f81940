#!/usr/bin/env node
// Package bin for the admin commands (backup, verify-store, restore): plain node on the
// compiled module (`npm run build`, run by `npm install`), so it needs no TypeScript loader.
import { main } from '../../dist/companion/cli/svc-admin.js';

try {
  process.exit(await main(process.argv.slice(2)));
} catch (e) {
  console.error(`svc-admin: unexpected failure: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
}
