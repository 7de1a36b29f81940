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

/** The last second rfc3339 wrote, and its text up to the fraction ("YYYY-MM-DDTHH:MM:SS."). */
let lastSecond = Number.NaN;
let lastSecondText = '';

/**
 * RFC 3339 UTC with milliseconds, the evidence format's timestamp form (DESIGN.md §3): the text
 * Date.prototype.toISOString writes. Every seal writes one, and many in the same second: that
 * second's text is kept and only the milliseconds written anew.
 */
export function rfc3339(date: Date): string {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    // toISOString throws a RangeError for an invalid date, as before; years outside 0..9999
    // are written with a sign and six digits, which the prefix keeps as it is.
    const text = date.toISOString();
    lastSecondText = text.slice(0, -4);
    lastSecond = second;
    return text;
  }
  const fraction = ms - second * 1000;
  return lastSecondText + (fraction < 10 ? '00' : fraction < 100 ? '0' : '') + fraction + 'Z';
}
