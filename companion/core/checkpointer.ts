/**
 * WAL checkpoints off the request path (measured: "WAL checkpoints stall
 * the single writer and set the p99"). SQLite's automatic checkpoint runs inside the commit
 * that crosses the threshold, on the event loop, so one unlucky request waits for the copy
 * and the database fsync. Here a worker thread with its own connection runs PASSIVE
 * checkpoints on a short interval: PASSIVE never blocks the writer (SQLite WAL §"Checkpoint"),
 * and every writer connection's autocheckpoint threshold (the request thread's and the
 * sealing thread's alike, core/db.ts) is a backstop that only matters if the worker stalls.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { WAL_AUTOCHECKPOINT_PAGES } from './db.ts';
import type { Db } from './db.ts';
import type { Logger } from './log.ts';
import { WorkerFailures } from './worker-failures.ts';
import type { WorkerStatus } from './worker-status.ts';

/** Pages (4 KiB each) the WAL may grow to before a writer checkpoints by itself (core/db.ts). */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = WAL_AUTOCHECKPOINT_PAGES;

export interface CheckpointStats {
  runs: number;
  /** Frames in the WAL and frames checkpointed at the last run (PRAGMA wal_checkpoint). */
  lastLogFrames: number;
  lastCheckpointedFrames: number;
}

// An eval'd CommonJS worker: it needs no TypeScript loader, so it runs the same under tsx,
// vitest and plain node.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 100');
let stopped = false;
const run = () => {
  if (stopped) return;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e), code: e && e.code });
  }
};
const timer = setInterval(run, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

export class Checkpointer {
  readonly #file: string;
  readonly #intervalMs: number;
  readonly #failures: WorkerFailures;
  #worker: Worker | undefined;
  #stats: CheckpointStats = { runs: 0, lastLogFrames: 0, lastCheckpointedFrames: 0 };
  #lastTickAt: string | null = null;

  constructor(db: Db, options: { intervalMs?: number; log: Logger }) {
    this.#file = db.name;
    this.#intervalMs = options.intervalMs ?? 250;
    this.#failures = new WorkerFailures(options.log, { worker: 'wal-checkpoint' });
    // Set on every connection when opened (core/db.ts); again here for one opened otherwise.
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  }

  stats(): CheckpointStats {
    return { ...this.#stats };
  }

  status(): WorkerStatus {
    return { name: 'wal-checkpoint', running: this.#worker !== undefined, lastTickAt: this.#lastTickAt, lastError: this.#failures.lastError, intervalMs: this.#intervalMs };
  }

  start(): void {
    if (this.#worker) return;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.#file, driver, intervalMs: this.#intervalMs } });
    worker.on('message', (m: { log?: number; checkpointed?: number; error?: string; code?: string }) => {
      if (m.error === undefined && m.log === undefined) return;
      this.#lastTickAt = new Date().toISOString();
      // A full disk fails every checkpoint, four times a second: one line for the outage.
      if (m.error !== undefined) this.#failures.failed('wal checkpoint failed', Object.assign(new Error(m.error), { code: m.code }));
      else if (m.log !== undefined) {
        this.#failures.succeeded();
        this.#stats = { runs: this.#stats.runs + 1, lastLogFrames: m.log, lastCheckpointedFrames: m.checkpointed ?? 0 };
      }
    });
    worker.on('error', (err) => this.#failures.failed('checkpoint worker failed', err));
    // A background helper must never keep the process alive on its own.
    worker.unref();
    this.#worker = worker;
  }

  /** Stops the worker and closes its connection, so the writer closes last and removes the WAL. */
  async stop(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    // Keep the process alive until the worker has closed its connection (it is unref'd).
    worker.ref();
    await new Promise<void>((resolve) => {
      const done = () => resolve();
      worker.on('message', (m: { stopped?: boolean }) => m.stopped && done());
      worker.once('exit', done);
      worker.postMessage('stop');
    });
    await worker.terminate();
  }
}
