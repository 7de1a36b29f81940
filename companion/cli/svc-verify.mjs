#!/usr/bin/env node
// Package bin for the offline verifier: loads the TypeScript entry through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./verify.ts');
process.exit(await main(process.argv.slice(2)));
