/**
 * The server clock, injectable so tests (and epoch logic) can pin or move time without
 * sleeping. Seals commit `recorded_at` from this clock (interface-spec "Evidence packet").
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to: `set` or `advance`. */
export class ManualClock implements Clock {
  #ms: number;

  constructor(start: Date | string | number = '2025-01-01T00:00:00.000Z') {
    this.#ms = new Date(start).getTime();
    if (Number.isNaN(this.#ms)) throw new TypeError(`expected a valid date, got ${String(start)}`);
  }

  now(): Date {
    return new Date(this.#ms);
  }

  set(to: Date | string | number): void {
    this.#ms = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.#ms += ms;
  }
}

/** RFC 3339 UTC with milliseconds, the evidence format's timestamp form (DESIGN.md §3). */
export function rfc3339(date: Date): string {
  return date.toISOString();
}
