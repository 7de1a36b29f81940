/**
 * The one sealing pipeline every seal goes through (gate decisions, records, and reviews):
 * idempotent replay → participants admit (the sandbox allowance) → payload_hash → packet_hash
 * → attestation v2 with the server-clock recorded_at → Ed25519 signature → the record row →
 * participants write their rows (usage, review item, event outbox, tenant-log leaf) → the
 * request's own writes, all in one transaction (DESIGN.md §3, §4; interface-spec States and
 * transitions). The participants are owned by their capabilities (./participants.ts).
 *
 * Durability with speed comes from group commit: requests that arrive while the event loop is
 * busy are sealed together in one transaction, so many answers share one fsync. The batch
 * commits without waiting for the disk (sync 'deferred'; on SQLite core/wal-sync.ts runs the fsync
 * off the event loop) and the next batch is sealed while it is in flight (pipelined group
 * commit). Nothing is answered before its transaction is durable, so an answered seal
 * survives a power cut. One refused or failed request never takes its neighbours down with it,
 * and costs them no savepoint: a refusal (402, 422) or a replay comes before the request writes
 * anything, and a request that fails otherwise (rarely: a participant's or its own onSealed's
 * error, a failed statement) rolls the batch back, which is then sealed again without it.
 *
 * On the embedded engine this pipeline runs by default on a thread of its own, beside the one
 * serving requests (../seal-thread/); there a Sealer seals the requests that travel, and the
 * request thread's Sealer those that carry functions.
 */
import { packetHash } from '../../shared/attestation.ts';
import { canonicalize } from '../../shared/canonical-json.ts';
import { evidencePacket, sealAttestation, verifyRequestFor } from '../../shared/seal.ts';
import { ATTESTATION_FORMAT } from '../../shared/types.ts';
import type { AttestationV2, EvidencePacket, PacketFields, SealKind, VerifyRequest } from '../../shared/types.ts';
import type { AuthContext } from '../core/auth.ts';
import type { Clock } from '../core/clock.ts';
import { rfc3339 } from '../core/clock.ts';
import { syncOf } from '../core/async-store.ts';
import { databaseUnavailableCode } from '../core/database-unavailable.ts';
import { ProblemError } from '../core/errors.ts';
import type { IdFactory } from '../core/ids.ts';
import type { Keyring } from '../core/keyring.ts';
import type { WorkerStatus } from '../core/worker-status.ts';
import { DurabilityError } from '../core/wal-sync.ts';
import type { Store, Tx } from '../core/stores.ts';
import { compactResponse, findReplay, findReplayNow, IDEMPOTENCY_TTL_DEFAULT_SECONDS } from './idempotency/replay.ts';
import type { IdempotencyClaim } from './idempotency/replay.ts';
import { SealBatch } from './participants.ts';
import type { SealContext, SealParticipant } from './participants.ts';
import { evidenceTexts, fillResponse, spliceResponse, templateText } from './sealed-response.ts';
import type { LogHead } from './store.ts';

export interface SealRequest {
  auth: AuthContext;
  /**
   * The answer is wanted as JSON text (SealOutcome text): the sealing thread then writes it once
   * there, and a string crosses back instead of the body's object tree (../http/hot-path.ts).
   */
  answerAsText?: boolean;
  /** First segment of action_key and href (interface-spec Gate response). */
  vertical: string;
  actionType: string;
  pack: string;
  kind: SealKind;
  decision: string | null;
  status: string;
  reviewRoute: string | null;
  payloadHash: string;
  manifestDigest: string | null;
  policyDigest: string | null;
  /** Extra committed facts (rule ids, engine version, linked keys); raw-safe. */
  context?: Record<string, unknown>;
  /** Raw-safe extras stored and returned with the record (next_step, catalog_refs, …). */
  details: Record<string, unknown>;
  /**
   * Facts for the participants only (how a review arrived, an external system's reference):
   * neither signed nor stored by the sealer; a participant that keeps one stores it itself.
   */
  annotations?: Readonly<Record<string, unknown>>;
  /** Whether this seal counts as a sealed action against the sandbox allowance, and its credits. */
  metering: { counted: boolean; credits: number };
  /** interface-spec Gate request: same key → the original response, metered once. */
  idempotency?: IdempotencyClaim;
  /**
   * interface-spec States and transitions: a needs_review action pauses. The reviews
   * participant opens its review item in the seal's transaction.
   */
  pauseForReview?: {
    actionType: string;
    nextStep: string;
    windowSeconds: number;
    /** The reviews capability's rule in force (reviews/rules.ts ReviewRule); the sealer only carries it. */
    rule: object | null;
  };
  /**
   * Extra writes that must commit atomically with the seal (a pending review item, a policy
   * version). Runs inside the seal's transaction; throwing refuses this request alone.
   */
  onSealed?(record: SealedRecord, tx: Tx): void | Promise<void>;
  /**
   * The response body, stored for idempotent replays: a template whose markers the record fills
   * in (./sealed-response.ts), or a function of the record. A template is plain data, so the
   * request can be sealed on the sealing thread (./seal-thread/); so can every request without
   * `onSealed` or a function here. A template answered as text crosses to that thread as its JSON
   * text (./sealed-response.ts templateText; ../seal-thread/protocol.ts forThread).
   */
  respond: { template: unknown } | { templateText: string } | ((record: SealedRecord) => unknown);
}

/** What participants, onSealed and respond receive: the new record's identity and its evidence. */
export interface SealedRecord {
  tenantId: string;
  actionKey: string;
  /** Leaf index in the tenant's log (DESIGN.md §4). */
  tenantSeq: number;
  attestationHash: string;
  vertical: string;
  pack: string;
  recordedAt: string;
  packet: EvidencePacket;
  verifyRequest: VerifyRequest;
}

export interface SealOutcome {
  status: number;
  body: unknown;
  /**
   * The body as the JSON text the caller receives (JSON.stringify's of the body), set instead of
   * `body` (then undefined) when the request asked for it (SealRequest answerAsText); a replayed
   * answer sealed on the request thread comes as `body` still.
   */
  text?: string;
  /** That text as the UTF-8 bytes the caller receives, set instead of `text` by the sealing thread (../seal-thread/protocol.ts encodeTexts). */
  bytes?: Uint8Array;
  /** True when the body is the stored answer to an earlier request with the same idempotency key. */
  replayed: boolean;
}

/** What the routes and workers seal through: this in-process Sealer or the sealing thread's (./seal-thread/). */
export interface SealPipeline {
  /** Seals one request; resolves once its transaction is durable. */
  seal(request: SealRequest): Promise<SealOutcome>;
  /** Requests waiting for a batch. */
  readonly queued: number;
  /** Resolves when every queued seal is durable and answered. */
  drain(): Promise<void>;
  /** Graceful shutdown: drains, then releases what the pipeline holds (a thread). */
  close(): Promise<void>;
  /** A pipeline with a thread of its own reports it with the background workers. */
  status?(): WorkerStatus;
}

export interface SealerDeps {
  /**
   * Each batch is one transaction committed without waiting for the disk (sync 'deferred'); its
   * answers wait for `durable()` (core/wal-sync.ts runs that fsync off the event loop).
   */
  store: Pick<Store, 'transaction' | 'durable'>;
  /** Called in order for each seal, inside its batch's transaction (./participants.ts). */
  participants: readonly SealParticipant[];
  /** Idempotency window: a key older than this is forgotten and its request sealed anew. */
  idempotencyTtlSeconds?: number;
  keyring: Keyring;
  clock: Clock;
  ids: IdFactory;
  /** Most requests sealed in one transaction; the rest wait for the next flush. */
  maxBatch?: number;
  /** Told about every committed batch (ops/metrics.ts); never changes what is sealed. */
  observer?: SealObserver;
}

export interface SealObserver {
  /**
   * `size` requests shared one transaction that took `seconds` to commit and `durableSeconds`
   * until it was on disk (the same, or more when the fsync runs after the commit); `sealed` are
   * the new seals.
   */
  committed(batch: { size: number; seconds: number; durableSeconds: number; sealed: readonly SealRequest[] }): void;
}

interface Pending {
  request: SealRequest;
  resolve(outcome: SealOutcome): void;
  reject(err: unknown): void;
}

/** After a failed fsync (core/wal-sync.ts): 503, and the service seals nothing until restarted. */
function notDurable(cause: unknown): ProblemError {
  return new ProblemError(
    { status: 503, code: 'service_unavailable', detail: 'the seal could not be made durable on disk; the service must be restarted before it seals again' },
    { cause },
  );
}

/**
 * A request failed after it wrote rows, or a statement of it failed (on PostgreSQL a failed
 * statement aborts the whole transaction): its batch is rolled back and sealed again without it.
 */
class SealedAgainWithout extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super('a seal failed after writing; its batch is sealed again without it');
  }
}

type Outcome = { ok: true; value: SealOutcome } | { ok: false; error: unknown };

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function evidenceHref(vertical: string, actionKey: string): string {
  return `/${vertical}/evidence-packets/${actionKey}`;
}

export class Sealer implements SealPipeline {
  readonly #deps: SealerDeps;
  readonly #maxBatch: number;
  #queue: Pending[] = [];
  #scheduled = false;
  /** Committed batches waiting for their fsync. */
  #syncing = 0;
  /** A batch's transaction is open: the next batch waits for it to end. */
  #transacting = false;
  #idle: (() => void)[] = [];

  constructor(deps: SealerDeps) {
    this.#deps = deps;
    this.#maxBatch = deps.maxBatch ?? 256;
  }

  /** Seals one request; resolves once its transaction has committed. */
  seal(request: SealRequest): Promise<SealOutcome> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, resolve, reject });
      this.#schedule();
    });
  }

  /** Requests waiting for the next flush. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Resolves when every queued seal is durable and answered (graceful shutdown). */
  drain(): Promise<void> {
    if (this.#queue.length === 0 && !this.#scheduled && this.#syncing === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  close(): Promise<void> {
    return this.drain();
  }

  #schedule(): void {
    // One batch transaction at a time: where a transaction waits for the database (PostgreSQL,
    // whose commit is also its flush to disk), requests arriving meanwhile gather into the next
    // batch instead of opening transactions of their own that would queue on the same tenant
    // locks. On SQLite a batch's transaction ends within the turn that opened it.
    if (this.#scheduled || this.#transacting) return;
    this.#scheduled = true;
    // setImmediate runs after the current I/O phase: every request parsed in this turn of the
    // event loop joins the same transaction.
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    this.#scheduled = false;
    // In tenant order: where a tenant's log head is a row lock held to commit (PostgreSQL), two
    // companions' batches then take their tenants in one order and never deadlock. The sort is
    // stable, so one tenant's seals keep their arrival order.
    const batch = this.#queue.splice(0, this.#maxBatch).sort((a, b) => compare(a.request.auth.tenantId, b.request.auth.tenantId));
    const outcomes: Outcome[] = [];
    /** Requests that failed after writing, by index: left out of the next attempt. */
    const failed = new Map<number, unknown>();
    const started = performance.now();
    const { store, participants } = this.#deps;
    // Counted from here, so drain() also waits for a batch whose transaction is still open.
    this.#syncing++;
    this.#transacting = true;
    try {
      for (;;) {
        try {
          await store.transaction(async (tx) => {
            // Here, not before: a store may run this function again (postgres-store.ts).
            outcomes.length = 0;
            // Each tenant's log head is read once per batch, then carried from seal to seal.
            const heads = new Map<string, LogHead | undefined>();
            const state = new SealBatch();
            for (let i = 0; i < batch.length; i++) {
              const prior = failed.get(i);
              if (failed.has(i)) {
                outcomes.push({ ok: false, error: prior });
                continue;
              }
              outcomes.push(await this.#sealOne(batch[i]!.request, i, heads, tx, state));
            }
            for (const p of participants) await p.flush?.(tx, state);
          }, { sync: 'deferred' });
          break;
        } catch (error) {
          if (!(error instanceof SealedAgainWithout)) throw error;
          failed.set(error.index, error.error);
        }
      }
    } catch (error) {
      this.#transacting = false;
      // The database itself failed (on SQLite the batch may be rolled back already), or the
      // commit did (disk full, I/O error): nothing of this batch is durable, and every seal in
      // it is refused with this error.
      for (const item of batch) item.reject(error instanceof DurabilityError ? notDurable(error) : error);
      this.#syncing--;
      this.#afterFlush();
      return;
    }
    this.#transacting = false;
    const committedSeconds = (performance.now() - started) / 1000;
    // The next batch may be sealed while this one's fsync runs; its answers wait for it.
    (store.durable() ?? Promise.resolve()).then(
      () => {
        this.#deps.observer?.committed({
          size: batch.length,
          seconds: committedSeconds,
          durableSeconds: (performance.now() - started) / 1000,
          sealed: batch.filter((_, i) => {
            const o = outcomes[i]!;
            return o.ok && !o.value.replayed;
          }).map((p) => p.request),
        });
        batch.forEach((item, i) => {
          const o = outcomes[i]!;
          if (o.ok) item.resolve(o.value);
          else item.reject(o.error);
        });
      },
      (error: unknown) => {
        for (const item of batch) item.reject(notDurable(error));
      },
    ).finally(() => {
      this.#syncing--;
      this.#afterFlush();
    });
    this.#afterFlush();
  }

  #afterFlush(): void {
    if (this.#queue.length > 0) this.#schedule();
    else if (!this.#scheduled && this.#syncing === 0) for (const done of this.#idle.splice(0)) done();
  }

  /**
   * One seal of a batch. A refusal (a ProblemError) before anything is written is its outcome,
   * and the transaction goes on as it was; any other failure, or one after its first write, is
   * thrown as SealedAgainWithout (the batch is rolled back and sealed again without it); a
   * failure of the database itself as it came (the batch fails).
   */
  async #sealOne(req: SealRequest, index: number, heads: Map<string, LogHead | undefined>, tx: Tx, batch: SealBatch): Promise<Outcome> {
    let written = false;
    try {
      return { ok: true, value: await this.#seal(req, heads, tx, batch, () => (written = true)) };
    } catch (error) {
      if (databaseUnavailableCode(error)) throw error;
      if (!written && error instanceof ProblemError) return { ok: false, error };
      throw new SealedAgainWithout(index, error);
    }
  }

  async #seal(req: SealRequest, heads: Map<string, LogHead | undefined>, tx: Tx, batch: SealBatch, writing: () => void): Promise<SealOutcome> {
    const { participants, keyring, clock, ids } = this.#deps;
    const tenantId = req.auth.tenantId;
    const head = heads.has(tenantId) ? heads.get(tenantId) : await tx.evidence.logHead(tenantId);
    // A tenant's log never goes back in time, even when the server clock steps back (NTP):
    // recorded_at follows tenant_seq, so the records export's keyset on (recorded_at,
    // tenant_seq) sees every new seal after every earlier one (interface-spec Tenant exports).
    const clockAt = rfc3339(clock.now());
    const at = head && head.recordedAt > clockAt ? head.recordedAt : clockAt;

    if (req.idempotency) {
      const idempotencyWindow = { notBefore: rfc3339(new Date(clock.now().getTime() - (this.#deps.idempotencyTtlSeconds ?? IDEMPOTENCY_TTL_DEFAULT_SECONDS) * 1000)) };
      // On SQLite straight from the statements, as insertRecord below.
      const idempotency = syncOf(tx.idempotency);
      const evidence = syncOf(tx.evidence);
      const replay =
        idempotency && evidence
          ? findReplayNow(idempotency, evidence, tenantId, req.idempotency, idempotencyWindow)
          : await findReplay(tx.idempotency, tx.evidence, tenantId, req.idempotency, idempotencyWindow);
      if (replay) return { ...replay, replayed: true };
    }
    // A hook answers with a promise only when it must wait (core/async-store.ts syncOf).
    for (const p of participants) {
      const admitting = p.admit?.(req, tx, batch);
      if (admitting) await admitting;
    }

    // interface-spec "What the service does" 9: credits are for sealed production actions; a
    // sandbox action counts against its allowance only.
    const credits = req.auth.tenantKind === 'production' ? req.metering.credits : 0;
    const signer = keyring.signerFor(req.auth.tenantKind);
    const actionKey = `${req.vertical}:${req.actionType}:${ids.ulid()}`;
    const fields: PacketFields = {
      action_key: actionKey,
      href: evidenceHref(req.vertical, actionKey),
      status: req.status,
      decision: req.decision,
      payload_hash: req.payloadHash,
      review_route: req.reviewRoute,
    };
    const attestation: AttestationV2 = {
      format: ATTESTATION_FORMAT,
      action_key: actionKey,
      tenant_id: tenantId,
      pack: req.pack,
      kind: req.kind,
      decision: req.decision,
      status: req.status,
      payload_hash: req.payloadHash,
      packet_hash: packetHash(fields),
      review_route: req.reviewRoute,
      recorded_at: at,
      key_id: signer.keyId,
      dev_key: signer.devKey,
      tenant_seq: head ? head.tenantSeq + 1 : 0,
      prev_attestation_hash: head ? head.attestationHash : null,
      manifest_digest: req.manifestDigest,
      policy_digest: req.policyDigest,
      ...(req.context ? { context: req.context } : {}),
    };
    // The attestation is canonicalized once: that text is signed, hashed, stored and spliced
    // into a text answer.
    const { seal, attestationText: storedAttestation } = sealAttestation(attestation, signer);
    // The answer carries the attestation as stored (JCS member order), exactly as every later
    // view rebuilds it (record-view.ts): an idempotent replay is the same JSON text. Parsed only
    // when read: an answer written as text splices the stored text instead.
    let parsed: AttestationV2 | undefined;
    const packet = evidencePacket(fields, attestation.packet_hash, {
      alg: seal.alg,
      key_id: seal.key_id,
      dev_key: seal.dev_key,
      get attestation() {
        return (parsed ??= JSON.parse(storedAttestation) as AttestationV2);
      },
      attestation_hash: seal.attestation_hash,
      signature: seal.signature,
    });
    let verifyRequest: VerifyRequest | undefined;
    const record: SealedRecord = {
      tenantId,
      actionKey,
      tenantSeq: attestation.tenant_seq,
      attestationHash: seal.attestation_hash,
      vertical: req.vertical,
      pack: req.pack,
      recordedAt: at,
      packet,
      get verifyRequest() {
        return (verifyRequest ??= verifyRequestFor(packet, fields));
      },
    };

    writing();
    // On SQLite straight into the statement: awaiting its settled promise costs a turn.
    const inserting = (syncOf(tx.evidence) ?? tx.evidence).insertRecord({
      tenantId,
      tenantSeq: attestation.tenant_seq,
      actionKey,
      vertical: req.vertical,
      pack: req.pack,
      kind: req.kind,
      decision: req.decision,
      status: req.status,
      reviewRoute: req.reviewRoute,
      payloadHash: req.payloadHash,
      packetHash: attestation.packet_hash,
      attestation: storedAttestation,
      attestationHash: seal.attestation_hash,
      signature: seal.signature,
      keyId: seal.key_id,
      devKey: seal.dev_key,
      recordedAt: at,
      credits,
      details: canonicalize(req.details),
    });
    if (inserting) await inserting;
    const context: SealContext = { request: req, record, credits };
    for (const p of participants) {
      const writing = p.sealed?.(context, tx, batch);
      if (writing) await writing;
    }

    if (req.onSealed) {
      await req.onSealed(record, tx);
      batch.forgetReads();
    }
    // An answer wanted as text is spliced from the texts already made (the template's, the
    // stored attestation's), never built as objects and stringified (./sealed-response.ts).
    const { respond } = req;
    const json = typeof respond === 'function' || !req.answerAsText ? undefined : 'templateText' in respond ? respond.templateText : templateText(respond.template);
    // The compact text only where an idempotency key stores it.
    const asText =
      json === undefined ? undefined : spliceResponse(json, actionKey, () => evidenceTexts(fields, attestation.packet_hash, seal, storedAttestation), req.idempotency !== undefined);
    const body = asText
      ? undefined
      : typeof respond === 'function'
        ? respond(record)
        : fillResponse('templateText' in respond ? JSON.parse(respond.templateText) : respond.template, record);
    const status = 201;
    if (req.idempotency) {
      const { scope, key, requestHash } = req.idempotency;
      const saving = (syncOf(tx.idempotency) ?? tx.idempotency).save(
        tenantId,
        scope,
        key,
        { requestHash, actionKey, status, response: asText ? asText.compact : compactResponse(body, record) },
        at,
      );
      if (saving) await saving;
    }
    // Last, so a request refused above leaves the batch's view of the log unchanged.
    heads.set(tenantId, { tenantSeq: attestation.tenant_seq, attestationHash: seal.attestation_hash, recordedAt: at });
    return asText ? { status, body: undefined, text: asText.text, replayed: false } : { status, body, replayed: false };
  }
}
