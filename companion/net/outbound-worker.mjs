// The guarded client's own thread (net/outbound-thread.ts explains why there is one). Plain
// JavaScript, so the same file starts from the sources and from dist/: the main thread hands
// over the client module's URL, the compiled .js in dist/ or the .ts source, which a worker
// can only load after registering a TypeScript loader itself (Node 20 passes none to a
// worker's entry). Each request is one message; its answer or error is one message back
// (messages sent before the client is loaded wait in the port's queue).
import { parentPort, workerData } from 'node:worker_threads';

if (workerData.module.endsWith('.ts')) (await import('tsx/esm/api')).register();
const { createOutboundHttp } = await import(workerData.module);
const client = createOutboundHttp(workerData.options);
/** Requests in flight by id, so the main thread can abort one (its lease ended). */
const inFlight = new Map();

parentPort.on('message', (m) => {
  if (m.type === 'abort') return inFlight.get(m.id)?.abort();
  const controller = new AbortController();
  inFlight.set(m.id, controller);
  client.post({ url: m.url, headers: m.headers, body: m.body, signal: controller.signal }).then(
    (res) => parentPort.postMessage({ id: m.id, ok: true, status: res.status, body: res.body }, [res.body.buffer]),
    (err) => parentPort.postMessage({ id: m.id, ok: false, code: err?.code ?? 'network_error', message: err?.message ?? String(err) }),
  ).finally(() => inFlight.delete(m.id));
});
