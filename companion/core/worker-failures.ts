/**
 * How a background worker reports its failed rounds: the last failure, kept for the readiness
 * probe until a round succeeds, and the log. While the database is unavailable
 * (./database-unavailable.ts) every round fails the same way, several times a second: that is
 * one warn line when the outage starts or its cause changes, and one info line at the first
 * round that succeeds again, rather than an error with a stack at every round. Any other
 * failure is an error, every time.
 */
import { databaseUnavailableCode } from './database-unavailable.ts';
import { errorFields } from './log.ts';
import type { LogFields, Logger } from './log.ts';

export class WorkerFailures {
  readonly #log: Logger;
  /** Which worker: its name or its queue. */
  readonly #who: LogFields;
  /** The database error code of the outage this worker is in, if it is in one. */
  #outage: string | undefined;
  #lastError: string | null = null;

  constructor(log: Logger, who: LogFields) {
    this.#log = log;
    this.#who = who;
  }

  /** The last round's failure, or null once a round succeeded (WorkerStatus.lastError). */
  get lastError(): string | null {
    return this.#lastError;
  }

  failed(message: string, err: unknown, fields: LogFields = {}): void {
    this.#lastError = err instanceof Error ? err.message : String(err);
    const code = databaseUnavailableCode(err);
    if (code === undefined) {
      this.#log.error(message, { ...this.#who, ...fields, ...errorFields(err) });
      return;
    }
    if (code !== this.#outage) this.#log.warn('worker paused: database unavailable', { ...this.#who, reason: code });
    this.#outage = code;
  }

  succeeded(): void {
    this.#lastError = null;
    if (this.#outage === undefined) return;
    this.#outage = undefined;
    this.#log.info('worker resumed: database available', this.#who);
  }
}
