/**
 * The guarded client (./outbound-http.ts) running on a thread of its own, behind the same
 * OutboundHttp interface. An HTTP request costs the event loop more than the bookkeeping
 * around it (undici's request objects, the socket writes, parsing the answer: measured at
 * 60–90 µs a request here), and deliveries run beside the gate: on the thread, a tenant's
 * webhook traffic takes the second core instead of the gate's. The guard itself is the
 * same code, run where the sockets are.
 *
 * One thread per client, started on the first request. If it dies, the requests in flight
 * fail as network errors (the job queue retries them, each with its same id) and the next
 * request starts a new thread.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { OutboundError } from './outbound-http.ts';
import type { OutboundErrorCode, OutboundHttp, OutboundHttpOptions, OutboundResponse } from './outbound-http.ts';

/** Everything but a custom resolver, which is a function and cannot cross to the thread. */
export type ThreadedOutboundOptions = Omit<OutboundHttpOptions, 'resolve'>;

type Answer = { id: number; ok: true; status: number; body: Uint8Array } | { id: number; ok: false; code: OutboundErrorCode; message: string };

interface Waiting {
  resolve(res: OutboundResponse): void;
  reject(err: OutboundError): void;
}

// The client module beside this one, as this one was loaded: .ts from the sources, .js in dist/.
const CLIENT_MODULE = new URL(`./outbound-http${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;

export function createThreadedOutboundHttp(options: ThreadedOutboundOptions): OutboundHttp {
  const waiting = new Map<number, Waiting>();
  let nextId = 0;
  let thread: Worker | undefined;

  function failAll(message: string): void {
    for (const w of waiting.values()) w.reject(new OutboundError('network_error', message));
    waiting.clear();
  }

  function start(): Worker {
    const t = new Worker(new URL('./outbound-worker.mjs', import.meta.url), { workerData: { module: CLIENT_MODULE, options } });
    t.on('message', (m: Answer) => {
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.ok) w.resolve({ status: m.status, body: m.body });
      else w.reject(new OutboundError(m.code, m.message));
    });
    // A failing thread must never take the process down: its requests fail, the next starts another.
    t.on('error', (err) => {
      if (thread === t) thread = undefined;
      failAll(`the outbound HTTP thread failed: ${err.message}`);
    });
    t.on('exit', () => {
      if (thread === t) thread = undefined;
      failAll('the outbound HTTP thread stopped');
    });
    // Its sockets are its own business: an idle keep-alive connection must not hold the process open.
    t.unref();
    return t;
  }

  return {
    post(req) {
      const t = (thread ??= start());
      const id = nextId++;
      return new Promise<OutboundResponse>((resolve, reject) => {
        const { signal } = req;
        if (signal?.aborted) return reject(new OutboundError('timeout', 'the delivery was cut off at its deadline'));
        const onAbort = () => t.postMessage({ type: 'abort', id });
        signal?.addEventListener('abort', onAbort, { once: true });
        const done = () => signal?.removeEventListener('abort', onAbort);
        waiting.set(id, {
          resolve: (res) => (done(), resolve(res)),
          reject: (err) => (done(), reject(err)),
        });
        t.postMessage({ id, url: req.url, headers: req.headers, body: req.body });
      });
    },
    async close() {
      const t = thread;
      thread = undefined;
      if (t) await t.terminate();
    },
  };
}
