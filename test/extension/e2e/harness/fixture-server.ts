/**
 * Serves the fixture pages (test/extension/fixtures: one per adapter, mirroring each site's
 * composer DOM) from a tiny HTTP server on 127.0.0.1 and a free port.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from '../../../helpers/vectors.ts';

export const FIXTURES_DIR = path.join(REPO_ROOT, 'test', 'extension', 'fixtures');
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

export interface FixtureServer {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

export async function startFixtureServer(): Promise<FixtureServer> {
  const server = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    const file = path.join(FIXTURES_DIR, name);
    const type = TYPES[path.extname(name)];
    if (!type || !fs.existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
