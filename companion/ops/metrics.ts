/**
 * Prometheus metrics (prom-client, text exposition format 0.0.4). One registry per service
 * instance, never prom-client's global one, so tests can run many apps in one process.
 *
 * Labels are bounded by construction: route patterns (never concrete paths, which carry
 * action keys), status codes, seal kinds and tenant kinds. No tenant id is ever a label.
 */
import fs from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SealObserver } from '../evidence/sealer.ts';

/** Seconds; spans a cached GET (~0.1 ms) to a slow fsync under load. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

export interface MetricsSources {
  /** Seals waiting for the next group commit (evidence/sealer.ts). */
  sealQueueDepth(): number;
  /** The SQLite database file, whose `-wal` companion's size is reported; unset on PostgreSQL. */
  databaseFile?: string;
}

export class Metrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #latency: Histogram<'method' | 'route'>;
  readonly #seals: Counter<'kind'>;
  readonly #batchSize: Histogram;
  readonly #commit: Histogram;
  readonly #durable: Histogram;
  readonly #metered: Counter<'tenant_kind'>;

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time from receiving a request to handing its response to the server, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#seals = new Counter({ name: 'svc_seals_total', help: 'Records sealed, by seal kind', labelNames: ['kind'], registers });
    this.#batchSize = new Histogram({
      name: 'svc_seal_batch_size',
      help: 'Seal requests sharing one group-commit transaction',
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.#commit = new Histogram({
      name: 'svc_seal_commit_duration_seconds',
      help: 'Duration of one group-commit sealing transaction (its fsync runs after it, see svc_seal_durable_duration_seconds)',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#durable = new Histogram({
      name: 'svc_seal_durable_duration_seconds',
      help: 'From the start of a group commit until its batch is on disk and answered: the commit plus its fsync, which runs off the event loop',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#metered = new Counter({
      name: 'svc_actions_metered_total',
      help: 'Sealed actions counted against an allowance or billed, by tenant kind (sandbox, production)',
      labelNames: ['tenant_kind'],
      registers,
    });
    // Both label values exist from the start, so a rate() over them never sees a missing series.
    for (const kind of ['sandbox', 'production']) this.#metered.inc({ tenant_kind: kind }, 0);
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
  }

  /** Gauges read at scrape time from the live service. */
  watch(sources: MetricsSources): void {
    const registers = [this.registry];
    new Gauge({
      name: 'svc_seal_queue_depth',
      help: 'Seal requests waiting for the next group commit',
      registers,
      collect() {
        this.set(sources.sealQueueDepth());
      },
    });
    const { databaseFile } = sources;
    if (databaseFile !== undefined) {
      new Gauge({
        name: 'svc_sqlite_wal_bytes',
        help: 'Size of the SQLite write-ahead log file (checkpoints shrink it)',
        registers,
        collect() {
          this.set(fileSize(`${databaseFile}-wal`));
        },
      });
    }
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.#requests.inc({ method, route, status: String(status) });
    this.#latency.observe({ method, route }, seconds);
  }

  /** Plugs into the sealer (evidence/sealer.ts SealerDeps.observer). */
  readonly sealObserver: SealObserver = {
    committed: ({ size, seconds, durableSeconds, sealed }) => {
      this.#batchSize.observe(size);
      this.#commit.observe(seconds);
      this.#durable.observe(durableSeconds);
      for (const request of sealed) {
        this.#seals.inc({ kind: request.kind });
        if (request.metering.counted) this.#metered.inc({ tenant_kind: request.auth.tenantKind });
      }
    },
  };

  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // no WAL yet (or checkpointed and removed at close)
  }
}
