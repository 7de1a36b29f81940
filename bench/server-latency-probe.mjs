// Loaded into the benchmarked companion with `node --import`: times every HTTP request on the
// server itself, from the 'request' event to the response's 'finish', so the server's own
// latency can be told apart from a load generator's scheduling on the same machine. On SIGUSR2
// it writes one JSON line of percentiles to stderr and starts over. Benchmarks only.
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';

const latencies = [];
const createServer = http.createServer;
http.createServer = function (...args) {
  const server = createServer.apply(this, args);
  server.prependListener('request', (req, res) => {
    const start = performance.now();
    res.once('finish', () => latencies.push(performance.now() - start));
  });
  return server;
};
syncBuiltinESMExports();

process.on('SIGUSR2', () => {
  const sorted = latencies.splice(0).sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  process.stderr.write(`server-latency ${JSON.stringify({ n: sorted.length, p50: at(0.5), p99: at(0.99), max: at(1) })}\n`);
});
