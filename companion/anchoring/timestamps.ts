/**
 * RFC 3161 timestamps of every epoch (README "Anchoring and portable evidence"). An epoch's
 * signature is the operator's own; a token from an outside time-stamp authority shows its
 * checkpoint existed at the token's genTime, so a history re-signed later cannot pass for it.
 *
 * - The close transaction (./epochs.ts) writes one request row per authority (SVC_TSA_URLS),
 *   so a closed epoch is never without its requests.
 * - The rows are leased jobs (core/jobs/queue.ts): the worker sends a TimeStampReq (RFC 3161
 *   §2.4.1: SHA-256 imprint of the checkpoint body, a fresh nonce, certReq TRUE) as
 *   application/timestamp-query (§3.4) through the guarded outbound client, and retries with
 *   the queue's backoff while the authority is down or answers badly. A process killed mid
 *   request leaves a lease that expires; the row is claimed and requested again.
 * - Every answer is verified before it is kept (shared/timestamp.ts: status, imprint, nonce,
 *   signature, chain to SVC_TSA_ROOTS_FILE at genTime, timeStamping EKU); the token's DER is
 *   stored in the same transaction that marks the request done.
 * - Until one token is stored the epoch is "awaiting" a timestamp; then "timestamped".
 */
import fs from 'node:fs';
import {
  TIMESTAMP_QUERY_TYPE,
  TIMESTAMP_REPLY_TYPE,
  certificatesFromPem,
  newNonce,
  servedTimestamp,
  timeStampRequest,
  timestampedBytes,
  verifyTimeStampResponse,
} from '../../shared/timestamp.ts';
import type { ServedTimestamp } from '../../shared/timestamp.ts';
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { IdFactory } from '../core/ids.ts';
import { DEFAULT_RETRY_SCHEDULE } from '../core/jobs/backoff.ts';
import type { RetrySchedule } from '../core/jobs/backoff.ts';
import { JobQueue } from '../core/jobs/queue.ts';
import type { ClaimedJob } from '../core/jobs/queue.ts';
import { JobWorker } from '../core/jobs/worker.ts';
import type { JobOutcome } from '../core/jobs/worker.ts';
import type { Logger } from '../core/log.ts';
import type { WorkerStatus } from '../core/worker-status.ts';
import { OutboundError, createOutboundHttp } from '../net/outbound-http.ts';
import type { OutboundHttp } from '../net/outbound-http.ts';
import type { Store, Tx } from '../core/stores.ts';
import type { AnchoringStore, EpochRow } from './store.ts';
import type { EpochTimestampRow, TimestampRequestRow } from './timestamps-store.ts';

export const TIMESTAMP_QUEUE = 'epoch_timestamp_requests';

/**
 * The queue's backoff (30 s doubling to 6 h) with more attempts than a delivery's: an epoch
 * waits about eight days for an authority before its request is dead-lettered.
 */
export const TIMESTAMP_RETRY_SCHEDULE: RetrySchedule = { ...DEFAULT_RETRY_SCHEDULE, maxAttempts: 40 };

/** A TimeStampResp with its certificates is a few KiB; anything past this is not one. */
const MAX_REPLY_BYTES = 64 * 1024;

export type TimestampStatus = 'awaiting' | 'timestamped' | 'not_requested';

/** What an epoch shows of its timestamps (GET /epochs/{seq}, inclusion proofs). */
export interface EpochTimestamps {
  /** timestamped: at least one verified token; awaiting: requested, none yet; not_requested: closed with no TSA configured. */
  timestamp_status: TimestampStatus;
  timestamps: ServedTimestamp[];
}

export async function epochTimestamps(store: Pick<AnchoringStore, 'epochTimestamps'>, epochSeq: number): Promise<EpochTimestamps> {
  const { tokens, requested } = await store.epochTimestamps(epochSeq);
  const status: TimestampStatus = tokens.length > 0 ? 'timestamped' : requested > 0 ? 'awaiting' : 'not_requested';
  return { timestamp_status: status, timestamps: tokens.map((t) => servedTimestamp(t.tsaUrl, t.genTime, t.token)) };
}

export interface TimestampServiceDeps {
  store: Pick<Store, 'anchoring' | 'transaction'>;
  clock: Clock;
  ids: IdFactory;
  log: Logger;
  config: Pick<Config, 'tsaUrls' | 'tsaRootsFile' | 'webhookAllowLoopback' | 'webhookLeaseSeconds'>;
  /** Tests: the guarded client's last check before a socket connects (outbound-http.ts). */
  beforeConnect?: (address: string) => void;
}

export interface TimestampService {
  /** The authorities each epoch is sent to; empty: none, and nothing is enqueued. */
  readonly urls: readonly string[];
  queue: JobQueue<TimestampRequestRow>;
  worker: JobWorker<TimestampRequestRow>;
  /** In the close transaction `tx`: one request per authority for the epoch. */
  enqueue(epoch: EpochRow, tx: Tx): Promise<void>;
  /** New requests were committed: claim them now. */
  wake(): void;
  start(): void;
  stop(): Promise<void>;
  status(): WorkerStatus;
}

export function createTimestampService(deps: TimestampServiceDeps): TimestampService {
  const { store, clock, log, config } = deps;
  const urls = [...config.tsaUrls];
  const outbound: OutboundHttp = createOutboundHttp({
    allowLoopback: config.webhookAllowLoopback,
    maxResponseBytes: MAX_REPLY_BYTES,
    ...(deps.beforeConnect ? { beforeConnect: deps.beforeConnect } : {}),
  });
  const queue = new JobQueue<TimestampRequestRow>({ table: TIMESTAMP_QUEUE, doneStatus: 'timestamped', schedule: TIMESTAMP_RETRY_SCHEDULE });
  /** Verified tokens between the attempt and the transaction that stores its outcome. */
  const verified = new Map<string, EpochTimestampRow>();
  let roots: Uint8Array[] | undefined;
  const trustedRoots = (): Uint8Array[] => {
    if (roots) return roots;
    if (config.tsaRootsFile === undefined) throw new Error('SVC_TSA_ROOTS_FILE is not set: no token can be verified');
    roots = certificatesFromPem(fs.readFileSync(config.tsaRootsFile, 'utf8'));
    return roots;
  };

  async function attempt(job: ClaimedJob<TimestampRequestRow>, signal: AbortSignal): Promise<JobOutcome> {
    const { epoch_seq: epochSeq, tsa_url: url } = job.row;
    const epoch = await store.anchoring.epoch(epochSeq);
    if (!epoch) return { ok: false, error: `epoch ${epochSeq} is not stored` };
    let anchors: Uint8Array[];
    try {
      anchors = trustedRoots();
    } catch (e) {
      return { ok: false, error: `TSA roots unusable: ${(e as Error).message}` };
    }
    const data = timestampedBytes(epoch.checkpoint);
    const nonce = newNonce();
    let res;
    try {
      res = await outbound.post({
        url,
        headers: { 'content-type': TIMESTAMP_QUERY_TYPE, accept: TIMESTAMP_REPLY_TYPE },
        body: timeStampRequest(data, nonce),
        signal,
      });
    } catch (e) {
      return { ok: false, error: e instanceof OutboundError ? `${e.code}: ${e.message}` : 'request failed' };
    }
    if (res.status !== 200) {
      const seconds = res.retryAfter !== undefined && /^\d{1,8}$/.test(res.retryAfter) ? Number(res.retryAfter) : undefined;
      return { ok: false, error: `the TSA answered HTTP ${res.status}`, ...(seconds !== undefined ? { retryAfterMs: seconds * 1000 } : {}) };
    }
    const r = await verifyTimeStampResponse(res.body, { data, nonce, roots: anchors });
    if (!r.verified || !r.token || !r.genTime) {
      const failed = r.checks.filter((c) => !c.ok);
      log.warn('timestamp token refused', { epoch_seq: epochSeq, url, reason: `failed checks: ${failed.map((c) => c.name).join(', ')}` });
      return { ok: false, error: `token refused: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ').slice(0, 400)}` };
    }
    verified.set(job.row.id, { epochSeq, tsaUrl: url, genTime: r.genTime, token: r.token, storedAt: rfc3339(clock.now()) });
    return { ok: true };
  }

  const worker = new JobWorker<TimestampRequestRow>({
    name: 'epoch-timestamps',
    queue,
    store,
    clock,
    log,
    leaseMs: config.webhookLeaseSeconds * 1000,
    concurrency: 8,
    handle: (job, signal) => attempt(job, signal),
    async settled(results, tx) {
      // Logged once the outcomes have committed (JobWorkerOptions.settled).
      const lines: (() => void)[] = [];
      for (const { job, outcome } of results) {
        const token = verified.get(job.row.id);
        verified.delete(job.row.id);
        // Kept with the outcome: a verified token is worth keeping even if the lease was lost.
        if (!outcome.ok || !token) continue;
        await tx.anchoring.insertTimestamp(token);
        lines.push(() => log.info('epoch timestamped', { epoch_seq: token.epochSeq, url: token.tsaUrl, reason: `genTime ${token.genTime}` }));
      }
      return () => lines.forEach((line) => line());
    },
  });

  return {
    urls,
    queue,
    worker,
    async enqueue(epoch, tx) {
      if (urls.length === 0) return;
      const now = clock.now();
      await tx.anchoring.enqueueTimestampRequests(
        urls.map((tsaUrl) => ({ id: deps.ids.next('tsq'), epochSeq: epoch.epochSeq, tsaUrl, runAt: now.getTime(), createdAt: rfc3339(now) })),
      );
    },
    wake: () => worker.wake(),
    start: () => worker.start(),
    status: () => worker.status(),
    async stop() {
      await worker.stop();
      await outbound.close();
    },
  };
}

