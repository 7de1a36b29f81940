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
import { toWire } from './protocol.ts';
import type { FromThread, ThreadData, ToThread } from './protocol.ts';

const port = parentPort!;
const { config, borrowedClock, board } = workerData as ThreadData;
const post = (message: FromThread) => port.postMessage(message);

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
const sealer = new Sealer({
  store,
  participants: sealParticipants({ outbox, routing }),
  idempotencyTtlSeconds: config.idempotencyTtlSeconds,
  keyring,
  clock,
  ids,
  observer: {
    committed({ size, seconds, durableSeconds, sealed }) {
      post({ type: 'committed', size, seconds, durableSeconds, sealed: sealed.map((r) => idOf.get(r)!) });
      if (woken.size > 0) {
        post({ type: 'wake', queues: [...woken] });
        woken.clear();
      }
    },
  },
});

// One message per turn carries every answer settled in it.
const results: Extract<FromThread, { type: 'results' }>['results'] = [];
function answer(result: (typeof results)[number]): void {
  if (results.length === 0) setImmediate(() => post({ type: 'results', results: results.splice(0) }));
  results.push(result);
}

port.on('message', (message: ToThread) => {
  if (message.type === 'close') {
    void sealer
      .drain()
      // After the turn that posts the last answers (answer() above), then close.
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => {
        store.close();
        keyring.close();
        port.close();
      });
    return;
  }
  const { id, request, now } = message;
  if (now !== undefined) borrowedNow = now;
  idOf.set(request, id);
  sealer.seal(request).then(
    // A new seal's text the sealer spliced; a replay's is JSON.stringify's, as the request
    // thread would write the body (c.json).
    (outcome) =>
      answer({
        id,
        ok: true,
        outcome:
          request.answerAsText && outcome.text === undefined ? { status: outcome.status, replayed: outcome.replayed, body: undefined, text: JSON.stringify(outcome.body) } : outcome,
      }),
    (error: unknown) => answer({ id, ok: false, error: toWire(error) }),
  );
});
post({ type: 'ready' });
