/**
 * The messages between the request thread and the sealing thread (./thread.ts). Everything
 * crosses by structured clone (HTML Living Standard §2.7, StructuredSerializeWithTransfer): a
 * seal request that carries a function (an `onSealed`, a `respond` function) never travels and
 * is sealed on the request thread instead.
 *
 * Each side posts at most one message per turn of its event loop, as each side's work arrives
 * in turns: the requests parsed in one turn of the request thread cross together (one
 * `seal` message), and the batches committed and seals settled in one turn of the sealing
 * thread cross together (one `turn` message). A message costs a wake-up of the other thread
 * and an event dispatched there, whatever it carries.
 */
import type { Config } from '../core/config.ts';
import { ProblemError, toProblem } from '../core/errors.ts';
import type { ProblemInit } from '../core/errors.ts';
import { templateText } from '../evidence/sealed-response.ts';
import type { SealOutcome, SealRequest } from '../evidence/sealer.ts';

export interface ThreadData {
  config: Config;
  /**
   * The request thread's clock is not the system clock (a test's): each message of requests
   * then carries its `now`, and the thread's clock reads the latest one received.
   */
  borrowedClock: boolean;
  /** The thread's transactions and fsyncs, for the request thread's readers (core/wal-sync.ts DurabilityBoard). */
  board: SharedArrayBuffer;
}

export type ToThread =
  /** The requests of one turn of the request thread, in arrival order. */
  | { type: 'seal'; seals: { id: number; request: SealRequest }[]; now?: number }
  /** Seal what is queued, close the database, exit. */
  | { type: 'close' };

/** A refused or failed seal as it crosses: a problem keeps its whole answer. */
export type WireError = { problem: ProblemInit } | { message: string };

/** One batch committed and is durable; `sealed` are the ids of the new seals (not replays). */
export interface CommittedBatch {
  size: number;
  seconds: number;
  durableSeconds: number;
  sealed: number[];
}

/** A seal settled other than as text (an answer's object, or a refusal). */
export type WireResult = { id: number; ok: true; outcome: SealOutcome } | { id: number; ok: false; error: WireError };

export type FromThread =
  | { type: 'ready' }
  /**
   * What one turn of the thread settled, read in this order: the batches committed (before
   * their answers, as the in-process sealer tells its observer), the background workers whose
   * rows those batches wrote (their wake-up), then the answers: those asked for as text in
   * `texts` (encodeTexts), every other one in `results`.
   */
  | { type: 'turn'; committed: CommittedBatch[]; wake: ('webhooks' | 'routing')[]; texts: EncodedTexts | null; results: WireResult[] };

/**
 * Answers asked for as text (SealRequest answerAsText) cross as the UTF-8 bytes the caller
 * receives, every answer of a turn in one ArrayBuffer that is transferred, not copied: a table
 * of TEXT_FIELDS int32 per answer (id, status, replayed, byte length), then the bytes in table
 * order. The text is encoded once, on the thread that made it, where a string would be copied
 * into the message, copied out of it, joined with the header block and only then encoded.
 */
export interface EncodedTexts {
  buffer: ArrayBuffer;
  count: number;
}

const TEXT_FIELDS = 4;

/** A settled answer's text as the thread has it. */
export interface TextAnswer {
  id: number;
  status: number;
  replayed: boolean;
  text: string;
}

/** UTF-8 writes at most three bytes per UTF-16 code unit (RFC 3629 §3; a surrogate pair's two units become four). */
const UTF8_BYTES_PER_UNIT = 3;

/**
 * Encodes a turn's answers (EncodedTexts) into `scratch.bytes` (grown as needed, kept by the
 * caller between turns), then copies what was written into an ArrayBuffer of its exact size,
 * to transfer: the bound is three bytes a code unit, and the answers are mostly ASCII.
 */
export function encodeTexts(answers: readonly TextAnswer[], scratch: { bytes: Buffer }): EncodedTexts {
  const count = answers.length;
  const tableBytes = count * TEXT_FIELDS * Int32Array.BYTES_PER_ELEMENT;
  let bound = tableBytes;
  for (const a of answers) bound += a.text.length * UTF8_BYTES_PER_UNIT;
  if (scratch.bytes.length < bound) scratch.bytes = Buffer.allocUnsafeSlow(Math.max(bound, scratch.bytes.length * 2));
  const into = scratch.bytes;
  const table = new Int32Array(into.buffer, into.byteOffset, count * TEXT_FIELDS);
  let at = tableBytes;
  for (let i = 0; i < count; i++) {
    const a = answers[i]!;
    const length = into.write(a.text, at, 'utf8');
    table[i * TEXT_FIELDS] = a.id;
    table[i * TEXT_FIELDS + 1] = a.status;
    table[i * TEXT_FIELDS + 2] = a.replayed ? 1 : 0;
    table[i * TEXT_FIELDS + 3] = length;
    at += length;
  }
  // An ArrayBuffer of its own: allocUnsafeSlow never hands out the Buffer pool's, which cannot be transferred.
  const out = Buffer.allocUnsafeSlow(at);
  into.copy(out, 0, 0, at);
  return { buffer: out.buffer, count };
}

/** The answers of encodeTexts in table order, each's bytes a view of the one buffer. */
export function decodeTexts({ buffer, count }: EncodedTexts, each: (id: number, outcome: SealOutcome) => void): void {
  const table = new Int32Array(buffer, 0, count * TEXT_FIELDS);
  let at = count * TEXT_FIELDS * Int32Array.BYTES_PER_ELEMENT;
  for (let i = 0; i < count; i++) {
    const length = table[i * TEXT_FIELDS + 3]!;
    each(table[i * TEXT_FIELDS]!, { status: table[i * TEXT_FIELDS + 1]!, replayed: table[i * TEXT_FIELDS + 2] === 1, body: undefined, bytes: Buffer.from(buffer, at, length) });
    at += length;
  }
}

/** A problem anticipated on the thread (core/errors.ts toProblem), a 503 for an unavailable database among them, crosses whole. */
export function toWire(err: unknown): WireError {
  const { problem, internal } = toProblem(err);
  if (internal) return { message: err instanceof Error ? err.message : String(err) };
  const { status, code, detail, errors, extra, headers } = problem;
  return { problem: { status, code, ...(detail !== undefined ? { detail } : {}), ...(errors ? { errors } : {}), extra, headers } };
}

export function fromWire(wire: WireError): Error {
  if ('problem' in wire) return new ProblemError(wire.problem);
  return new Error(`sealing thread: ${wire.message}`);
}

/**
 * The request as it crosses to the thread: a template answered as text (SealRequest
 * answerAsText) crosses as its JSON text, one string to clone instead of its object tree, which
 * the thread would only stringify again (evidence/sealed-response.ts templateText).
 */
export function forThread(request: SealRequest): SealRequest {
  const { respond } = request;
  if (!request.answerAsText || typeof respond === 'function' || !('template' in respond)) return request;
  const json = templateText(respond.template);
  return json === undefined ? request : { ...request, respond: { templateText: json } };
}

/** Whether the request can be sealed on the sealing thread: nothing in it is a function. */
export function travels(request: SealRequest): boolean {
  return request.onSealed === undefined && typeof request.respond !== 'function';
}
