/**
 * The sealing thread: a worker thread with its own connection to the SQLite file, running the
 * one sealing pipeline (evidence/sealer.ts) with the same participants as the request thread
 * (../seal-participants.ts). Requests arrive by message while the previous batch is sealed,
 * so the next batch forms meanwhile; as on the request thread, a batch commits without its
 * fsync, which then runs on a libuv thread while the next batch is sealed (core/wal-sync.ts),
 * and only then are its answers posted back. The request thread's readers learn of commits not
 * yet on disk through the DurabilityBoard they share, and sync the WAL before they answer.
 *
 * It signs with the production key file from the data directory (SVC_SIGNER=file) and the
 * sandbox dev key, as the request thread does.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Clock } from '../core/clock.ts';
import { systemClock } from '../core/clock.ts';
import { createIdFactory } from '../core/ids.ts';
import { dedicateToSealBatches } from '../core/sqlite-transaction.ts';
import { DurabilityBoard } from '../core/wal-sync.ts';
import { Keyring } from '../core/keyring.ts';
import { installNativeSha256 } from '../core/native-hash.ts';
import { createSandboxSigner, loadOrCreateProductionSigner } from '../core/signer.ts';
import type { SealRequest } from '../evidence/sealer.ts';
import { Sealer } from '../evidence/sealer.ts';
import { routingParticipant } from '../routing/participant.ts';
import { sealParticipants } from '../seal-participants.ts';
import { openSqliteStore } from '../store.ts';
import { WebhookOutbox } from '../webhooks/outbox.ts';
import { encodeTexts, toWire } from './protocol.ts';
import type { CommittedBatch, FromThread, TextAnswer, ThreadData, ToThread, WireResult } from './protocol.ts';

const port = parentPort!;
const { config, borrowedClock, board } = workerData as ThreadData;

let borrowedNow = Date.now();
const clock: Clock = borrowedClock ? { now: () => new Date(borrowedNow) } : systemClock;
const ids = createIdFactory(clock);

installNativeSha256();
const store = openSqliteStore({ dataDir: config.dataDir, sharedWriters: true, walSync: { publish: new DurabilityBoard(board) } });
// This connection runs seal batches only: its PRAGMAs are set once, not around every batch.
dedicateToSealBatches(store.db);
const keyring = new Keyring({ sandbox: createSandboxSigner(), production: loadOrCreateProductionSigner(config.dataDir) });

// Rows for the request thread's delivery and dispatch workers: it is told once they are durable.
const woken = new Set<'webhooks' | 'routing'>();
const outbox = new WebhookOutbox({ ids, clock });
outbox.onEnqueued = () => woken.add('webhooks');
const routing = routingParticipant({ ids, clock, baseUrl: config.publicBaseUrl, onEnqueued: () => woken.add('routing') });

const idOf = new WeakMap<SealRequest, number>();

// One message per turn carries every batch committed and every seal settled in it (./protocol.ts).
let turn: { committed: CommittedBatch[]; wake: Set<'webhooks' | 'routing'>; texts: TextAnswer[]; results: WireResult[] } | undefined;
const scratch = { bytes: Buffer.allocUnsafeSlow(0) };
function thisTurn(): NonNullable<typeof turn> {
  if (turn === undefined) {
    turn = { committed: [], wake: new Set(), texts: [], results: [] };
    // After the microtasks of this turn, in which the answers of a batch just committed settle.
    setImmediate(postTurn);
  }
  return turn;
}
function postTurn(): void {
  const { committed, wake, texts, results } = turn!;
  turn = undefined;
  const encoded = texts.length > 0 ? encodeTexts(texts, scratch) : null;
  const message: FromThread = { type: 'turn', committed, wake: [...wake], texts: encoded, results };
  port.postMessage(message, encoded ? [encoded.buffer] : []);
}

const sealer = new Sealer({
  store,
  participants: sealParticipants({ outbox, routing }),
  idempotencyTtlSeconds: config.idempotencyTtlSeconds,
  keyring,
  clock,
  ids,
  observer: {
    committed({ size, seconds, durableSeconds, sealed }) {
      const current = thisTurn();
      current.committed.push({ size, seconds, durableSeconds, sealed: sealed.map((r) => idOf.get(r)!) });
      // Told once durable, as the rows' readers on the request thread would see them.
      for (const queue of woken) current.wake.add(queue);
      woken.clear();
    },
  },
});

port.on('message', (message: ToThread) => {
  if (message.type === 'close') {
    void sealer
      .drain()
      // After the turn that posts the last answers (postTurn above), then close.
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => {
        store.close();
        keyring.close();
        port.close();
      });
    return;
  }
  if (message.now !== undefined) borrowedNow = message.now;
  for (const { id, request } of message.seals) {
    idOf.set(request, id);
    sealer.seal(request).then(
      (outcome) => {
        // A new seal's text the sealer spliced; a replay's is JSON.stringify's, as the request
        // thread would write the body (c.json).
        const text = request.answerAsText ? (outcome.text ?? JSON.stringify(outcome.body)) : undefined;
        if (typeof text === 'string') thisTurn().texts.push({ id, status: outcome.status, replayed: outcome.replayed, text });
        else thisTurn().results.push({ id, ok: true, outcome });
      },
      (error: unknown) => thisTurn().results.push({ id, ok: false, error: toWire(error) }),
    );
  }
});
port.postMessage({ type: 'ready' } satisfies FromThread);
