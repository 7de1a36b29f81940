/**
 * The messages between the request thread and the sealing thread (./thread.ts). Everything
 * crosses by structured clone: a seal request that carries a function (an `onSealed`, a
 * `respond` function) never travels and is sealed on the request thread instead.
 */
import type { Config } from '../core/config.ts';
import { ProblemError, toProblem } from '../core/errors.ts';
import type { ProblemInit } from '../core/errors.ts';
import { templateText } from '../evidence/sealed-response.ts';
import type { SealOutcome, SealRequest } from '../evidence/sealer.ts';

export interface ThreadData {
  config: Config;
  /**
   * The request thread's clock is not the system clock (a test's): each request then carries
   * its `now`, and the thread's clock reads the latest one received.
   */
  borrowedClock: boolean;
  /** The thread's transactions and fsyncs, for the request thread's readers (core/wal-sync.ts DurabilityBoard). */
  board: SharedArrayBuffer;
}

export type ToThread =
  | { type: 'seal'; id: number; request: SealRequest; now?: number }
  /** Seal what is queued, close the database, exit. */
  | { type: 'close' };

/** A refused or failed seal as it crosses: a problem keeps its whole answer. */
export type WireError = { problem: ProblemInit } | { message: string };

export type FromThread =
  | { type: 'ready' }
  /** One batch committed and is durable; `sealed` are the ids of the new seals (not replays). */
  | { type: 'committed'; size: number; seconds: number; durableSeconds: number; sealed: number[] }
  | { type: 'results'; results: ({ id: number; ok: true; outcome: SealOutcome } | { id: number; ok: false; error: WireError })[] }
  /** Rows for a background worker were written (the webhook delivery or route dispatch worker's wake-up). */
  | { type: 'wake'; queues: ('webhooks' | 'routing')[] };

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
