#!/usr/bin/env node
// Package bin for the offline verifier: plain node on the compiled verifier (`npm run build`,
// run by `npm install`), so it needs no TypeScript loader.
import { main } from '../../dist/companion/cli/verify.js';

process.exit(await main(process.argv.slice(2)));
