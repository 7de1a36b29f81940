// `npm run build`: the companion and shared/ compiled to dist/ (tsconfig.build.json), plus the
// files the compiled code reads at run time beside it (the SQL migrations, a worker entry).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';

fs.rmSync('dist', { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
fs.cpSync('companion/migrations', 'dist/companion/migrations', { recursive: true });
// The AWS KMS client thread's entry is plain JavaScript, loaded by URL beside its module.
fs.cpSync('companion/core/signers/aws-kms-worker.mjs', 'dist/companion/core/signers/aws-kms-worker.mjs');
// The tenant console's static files (dist/console), served by the companion at /console.
const { buildConsole } = await import('./build-console.mjs');
await buildConsole();
