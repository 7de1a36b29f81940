// The node flags `npm start` runs the service with (package.json scripts.start), the one place
// they are set: the Dockerfile, the systemd unit and the benchmarks' measuring process use the
// same, and tests check they agree.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function startNodeFlags() {
  const start = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
  const m = /^exec node((?: --[a-z0-9-]+(?:=\S+)?)*) dist\/companion\/main\.js$/.exec(start);
  if (!m) throw new Error(`package.json scripts.start is not "exec node [flags] dist/companion/main.js": ${start}`);
  return m[1].split(' ').filter(Boolean);
}
