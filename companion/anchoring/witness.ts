/**
 * Witnessed checkpoints (c2sp.org/tlog-witness, c2sp.org/tlog-cosignature). An epoch's
 * checkpoint is signed by the operator's own key, so the operator could sign two histories;
 * a witness cosigns a checkpoint only after checking it consistent with the last one it saw of
 * the same log, so two histories cannot both collect its cosignature.
 *
 * - The close transaction (./epochs.ts) writes one submission row per configured witness
 *   (SVC_WITNESSES or SVC_WITNESSES_FILE), so a closed epoch is never without them.
 * - The rows are leased jobs (core/jobs/queue.ts), run one at a time, oldest first, so a
 *   witness sees the log grow in order. An attempt POSTs `<url>/add-checkpoint` with
 *   `old <size>` (the size this witness last cosigned, kept per witness and origin), the
 *   RFC 9162 consistency proof from that size to the checkpoint's, a blank line and the
 *   checkpoint, through the guarded outbound client; transport failures and 4xx/5xx answers are
 *   retried with the queue's backoff. A process killed mid-request leaves a lease that expires,
 *   and the submission is sent again after restart.
 * - 409 (tlog-witness: the old size is not the witness's) carries the witness's size: it is
 *   learnt and the request is made again at once from there. A witness already past this
 *   checkpoint has cosigned a later one, which covers this one: the submission ends
 *   "superseded". A 409 at the size we sent means the witness holds another root at that size:
 *   a split view, logged and retried until an operator looks.
 * - A 200 answer's signature lines are verified against the witness's configured key over this
 *   checkpoint (cosignature/v1) before anything is kept; lines of other keys are dropped.
 */
import fs from 'node:fs';
import { parseCheckpoint } from '../../shared/epoch.ts';
import { parseNote } from '../../shared/note.ts';
import type { Note } from '../../shared/note.ts';
import {
  CosignatureInvalid,
  TLOG_SIZE_CONTENT_TYPE,
  addCheckpointBody,
  parseCosignatureLines,
  parseTlogSize,
  parseWitnessList,
  verifyCosignature,
  withSignatureLines,
} from '../../shared/witness.ts';
import type { WitnessEndpoint } from '../../shared/witness.ts';
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
import { EPOCH_LOG_ID } from './epochs.ts';
import type { AnchoringStore, EpochRow } from './store.ts';
import { StoredTrees } from './stored-tree.ts';
import type { CosignatureRow, WitnessSubmissionRow } from './witness-store.ts';

export const WITNESS_QUEUE = 'witness_submissions';

/** The queue's backoff (30 s doubling to 6 h), with as many attempts as a timestamp's: about eight days. */
export const WITNESS_RETRY_SCHEDULE: RetrySchedule = { ...DEFAULT_RETRY_SCHEDULE, maxAttempts: 40 };

/** A witness answers a few signature lines or a size; anything longer is not an answer. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** 409s followed within one attempt (each teaches the witness's size); more means it keeps moving. */
const MAX_CONFLICTS_PER_ATTEMPT = 3;

/** The witnesses from SVC_WITNESSES, else the file SVC_WITNESSES_FILE (checked at start by settings-check.ts). */
export function configuredWitnesses(config: Pick<Config, 'witnesses' | 'witnessesFile'>): WitnessEndpoint[] {
  const [text, source] = config.witnessesFile === undefined ? [JSON.stringify(config.witnesses), 'SVC_WITNESSES'] : [fs.readFileSync(config.witnessesFile, 'utf8'), 'SVC_WITNESSES_FILE'];
  const r = parseWitnessList(text, source);
  if (r.problems.length > 0) throw new Error(r.problems.join('; '));
  return r.witnesses;
}

/** What an epoch shows of its witnesses (GET /epochs/{seq}, GET /checkpoint, inclusion proofs). */
export interface EpochWitnessing {
  /** The checkpoint with the witnesses' cosignature lines after the log's signature. */
  cosigned_checkpoint: string;
  cosignatures: { witness: string; key_id: string; timestamp: number }[];
}

/** The epoch's checkpoint with its stored cosignatures (additive fields of the served epoch). */
export async function epochWitnessing(store: Pick<AnchoringStore, 'cosignatures'>, epoch: Pick<EpochRow, 'epochSeq' | 'checkpoint'>): Promise<EpochWitnessing> {
  const rows = await store.cosignatures(epoch.epochSeq);
  return {
    cosigned_checkpoint: rows.length === 0 ? epoch.checkpoint : withSignatureLines(epoch.checkpoint, rows.map((r) => r.line)),
    cosignatures: rows.map((r) => ({ witness: r.keyName, key_id: r.keyIdHex, timestamp: r.cosignedAt })),
  };
}

export interface WitnessServiceDeps {
  store: Pick<Store, 'anchoring' | 'transaction'>;
  clock: Clock;
  ids: IdFactory;
  log: Logger;
  config: Pick<Config, 'witnesses' | 'witnessesFile' | 'webhookAllowLoopback' | 'webhookLeaseSeconds'>;
  /** Tests: the guarded client's last check before a socket connects (outbound-http.ts). */
  beforeConnect?: (address: string) => void;
}

export interface WitnessService {
  readonly witnesses: readonly WitnessEndpoint[];
  queue: JobQueue<WitnessSubmissionRow>;
  worker: JobWorker<WitnessSubmissionRow>;
  /** In the close transaction `tx`: one submission per witness for the epoch. */
  enqueue(epoch: EpochRow, tx: Tx): Promise<void>;
  wake(): void;
  start(): void;
  stop(): Promise<void>;
  status(): WorkerStatus;
}

type AttemptResult = { outcome: JobOutcome; store?: { cosignatures: CosignatureRow[]; size: number; origin: string; result: 'cosigned' | 'superseded' } };

export function createWitnessService(deps: WitnessServiceDeps): WitnessService {
  const { store, clock, log } = deps;
  const witnesses = configuredWitnesses(deps.config);
  const byName = new Map(witnesses.map((w) => [w.name, w]));
  const outbound: OutboundHttp = createOutboundHttp({
    allowLoopback: deps.config.webhookAllowLoopback,
    maxResponseBytes: MAX_ANSWER_BYTES,
    ...(deps.beforeConnect ? { beforeConnect: deps.beforeConnect } : {}),
  });
  const queue = new JobQueue<WitnessSubmissionRow>({ table: WITNESS_QUEUE, doneStatus: 'done', schedule: WITNESS_RETRY_SCHEDULE });
  const trees = new StoredTrees(store.anchoring);
  /** What an attempt learnt, between the attempt and the transaction that stores its outcome. */
  const learnt = new Map<string, NonNullable<AttemptResult['store']>>();

  async function attempt(job: ClaimedJob<WitnessSubmissionRow>, signal: AbortSignal): Promise<AttemptResult> {
    const { epoch_seq: epochSeq, witness: name } = job.row;
    const witness = byName.get(name);
    if (!witness) return { outcome: { ok: false, error: `witness ${name} is no longer configured` } };
    const epoch = await store.anchoring.epoch(epochSeq);
    if (!epoch) return { outcome: { ok: false, error: `epoch ${epochSeq} is not stored` } };
    const cp = parseCheckpoint(epoch.checkpoint);
    const note = parseNote(epoch.checkpoint);
    let old = await store.anchoring.witnessSize(name, cp.origin);
    for (let conflicts = 0; ; ) {
      // The witness has cosigned a larger tree of this log: that cosignature covers this one.
      if (old > cp.size) return { outcome: { ok: true }, store: { cosignatures: [], size: old, origin: cp.origin, result: 'superseded' } };
      const proof = old === 0 || old === cp.size ? [] : await trees.consistencyProof(EPOCH_LOG_ID, old, cp.size);
      let res;
      try {
        res = await outbound.post({
          url: `${witness.url}/add-checkpoint`,
          headers: { 'content-type': 'text/plain; charset=utf-8', accept: 'text/plain' },
          body: addCheckpointBody(old, proof, epoch.checkpoint),
          signal,
        });
      } catch (e) {
        return { outcome: { ok: false, error: e instanceof OutboundError ? `${e.code}: ${e.message}` : 'request failed' } };
      }
      const text = new TextDecoder().decode(res.body);
      if (res.status === 200) return { outcome: { ok: true }, store: await cosigned(witness, note, epochSeq, cp.origin, cp.size, text) };
      if (res.status === 409 && conflicts < MAX_CONFLICTS_PER_ATTEMPT) {
        conflicts++;
        let size: number;
        try {
          size = parseTlogSize(text);
        } catch {
          return { outcome: { ok: false, error: `the witness answered 409 without a ${TLOG_SIZE_CONTENT_TYPE} size` } };
        }
        if (size === old) {
          // tlog-witness: a 409 at the size we sent is a different root at that size.
          log.error('witness holds another checkpoint of this log at the same size: split view', { url: witness.url, epoch_seq: epochSeq, reason: `size ${size}` });
          return { outcome: { ok: false, error: `the witness holds a different root at size ${size} (split view)` } };
        }
        log.info('witness size learnt', { url: witness.url, reason: `${cp.origin} at size ${size}, was ${old}` });
        await store.anchoring.setWitnessSize(name, cp.origin, size, rfc3339(clock.now()));
        if (size > epoch.epochSeq + 1 && size > (await store.anchoring.lastEpoch())!.epochSeq + 1) {
          log.error('witness claims a larger tree of this log than it has', { url: witness.url, reason: `${cp.origin} at size ${size}` });
        }
        old = size;
        continue;
      }
      const seconds = res.retryAfter !== undefined && /^\d{1,8}$/.test(res.retryAfter) ? Number(res.retryAfter) : undefined;
      // 403 (our key unknown to it), 404 (origin unknown), 422 (proof refused), 5xx: retried.
      log.warn('witness refused the checkpoint', { url: witness.url, epoch_seq: epochSeq, status: res.status });
      return { outcome: { ok: false, error: `the witness answered HTTP ${res.status}`, ...(seconds !== undefined ? { retryAfterMs: seconds * 1000 } : {}) } };
    }
  }

  /** Verifies a 200 answer's lines over the checkpoint; throws when the witness's own line fails. */
  async function cosigned(witness: WitnessEndpoint, note: Note, epochSeq: number, origin: string, size: number, body: string) {
    const lines = parseCosignatureLines(body);
    const c = await verifyCosignature({ text: note.text, signatures: lines }, witness.key);
    if (!c) throw new CosignatureInvalid(`the answer holds no cosignature of ${witness.name} (${witness.key.keyIdHex})`);
    const storedAt = rfc3339(clock.now());
    const row: CosignatureRow = { epochSeq, keyName: c.name, keyIdHex: c.keyIdHex, witness: witness.name, cosignedAt: c.timestamp, line: c.line, storedAt };
    return { cosignatures: [row], size, origin, result: 'cosigned' as const };
  }

  async function handle(job: ClaimedJob<WitnessSubmissionRow>, signal: AbortSignal): Promise<JobOutcome> {
    let r: AttemptResult;
    try {
      r = await attempt(job, signal);
    } catch (e) {
      const refused = e instanceof CosignatureInvalid || e instanceof RangeError;
      log.warn('witness answer refused', { url: byName.get(job.row.witness)?.url, epoch_seq: job.row.epoch_seq, reason: refused ? (e as Error).message : 'error' });
      return { ok: false, error: refused ? `answer refused: ${(e as Error).message}` : `attempt failed: ${(e as Error).message}` };
    }
    if (r.store) learnt.set(job.row.id, r.store);
    return r.outcome;
  }

  const worker = new JobWorker<WitnessSubmissionRow>({
    name: 'witness-submissions',
    queue,
    store,
    clock,
    log,
    leaseMs: deps.config.webhookLeaseSeconds * 1000,
    // One at a time, oldest first: a witness sees the log's checkpoints in order.
    concurrency: 1,
    handle: (job, signal) => handle(job, signal),
    async settled(results, tx) {
      // Logged once the outcomes have committed (JobWorkerOptions.settled).
      const lines: (() => void)[] = [];
      for (const { job, outcome } of results) {
        const got = learnt.get(job.row.id);
        learnt.delete(job.row.id);
        if (!outcome.ok || !got) continue;
        // Kept even if the lease was lost: a verified cosignature is a fact about the checkpoint.
        await tx.anchoring.insertCosignatures(got.cosignatures);
        if (got.result === 'cosigned') await tx.anchoring.setWitnessSize(job.row.witness, got.origin, got.size, rfc3339(clock.now()));
        await tx.anchoring.setWitnessSubmissionOutcome(job.row.id, got.result);
        lines.push(() => log.info(got.result === 'cosigned' ? 'checkpoint cosigned' : 'checkpoint superseded at witness', { url: byName.get(job.row.witness)?.url, epoch_seq: job.row.epoch_seq, reason: `size ${got.size}` }));
      }
      return () => lines.forEach((line) => line());
    },
  });

  return {
    witnesses,
    queue,
    worker,
    async enqueue(epoch, tx) {
      if (witnesses.length === 0) return;
      const now = clock.now();
      await tx.anchoring.enqueueWitnessSubmissions(
        witnesses.map((w) => ({ id: deps.ids.next('wsub'), witness: w.name, epochSeq: epoch.epochSeq, runAt: now.getTime(), createdAt: rfc3339(now) })),
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
