/**
 * The ceiling HTTP puts on the gate benchmark on this machine: a node:http server that does
 * floor A's work per request (parse the JSON body, then floor-a.ts: canonicalize, three
 * SHA-256, one Ed25519 signature) and nothing else: no authentication, no decision, no storage.
 * No gate can answer faster than this under the same load generator on the same cores.
 *
 * Run as `node --import tsx bench/http-ceiling-server.ts <processes>`: that many processes share
 * one port (node:cluster), so with two the ceiling is of both cores. It prints
 * `listening on http://127.0.0.1:<port>` once every process listens. Benchmarks only.
 *
 * With `--bare <bytes>` after the process count it does no floor-A work: it parses the body and
 * answers 201 with a JSON body of that many bytes (a gate decision's answer is about 4,300), so
 * the server's CPU per request is what node:http itself costs a request of the gate's shape: the
 * part of the gate's request thread no change to the gate can remove.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { floorAKey, floorAWork } from './floor-a.ts';

const processes = Math.max(1, Number(process.argv[2] ?? 1));
const bareAt = process.argv.indexOf('--bare');
const bareBytes = bareAt === -1 ? undefined : Math.max(2, Number(process.argv[bareAt + 1]));
/** A JSON string of bareBytes bytes, written as the gate's answers are: one string. */
const bareAnswer = bareBytes === undefined ? '' : JSON.stringify('x'.repeat(bareBytes - 2));

if (cluster.isPrimary && processes > 1) {
  let listening = 0;
  for (let i = 0; i < processes; i++) {
    cluster.fork().on('listening', (address: { port: number }) => {
      // listen(0) in cluster workers gives every worker the same port.
      if (++listening === processes) console.log(`listening on http://127.0.0.1:${address.port}`);
    });
  }
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
    process.exit(0);
  });
} else {
  const key = floorAKey();
  let seq = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString()) as object;
      if (bareBytes !== undefined) {
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(bareAnswer) }).end(bareAnswer);
        return;
      }
      const doc = { ...parsed, seq: seq++, recorded_at: new Date().toISOString() };
      const { hash, signature } = floorAWork(doc, key);
      const body = JSON.stringify({ attestation_hash: hash, signature: signature.toString('base64url') });
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    if (cluster.isPrimary) console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
}
