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

/**
 * The last two seconds rfc3339 wrote, and each one's text up to the fraction
 * ("YYYY-MM-DDTHH:MM:SS."): a keyed seal writes its own second and its idempotency window's,
 * a day before, so two are kept.
 */
const seconds = [Number.NaN, Number.NaN];
const secondTexts = ['', ''];
let replaced = 0;

/**
 * RFC 3339 UTC with milliseconds, the evidence format's timestamp form (DESIGN.md §3): the text
 * Date.prototype.toISOString writes. Every seal writes one, and many in the same second: that
 * second's text is kept and only the milliseconds written anew.
 */
export function rfc3339(date: Date): string {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  const slot = second === seconds[0] ? 0 : second === seconds[1] ? 1 : -1;
  if (slot === -1) {
    // toISOString throws a RangeError for an invalid date (NaN is never a kept second), as
    // before; years outside 0..9999 are written with a sign and six digits, kept as they are.
    const text = date.toISOString();
    replaced ^= 1;
    seconds[replaced] = second;
    secondTexts[replaced] = text.slice(0, -4);
    return text;
  }
  const fraction = ms - second * 1000;
  return secondTexts[slot] + (fraction < 10 ? '00' : fraction < 100 ? '0' : '') + fraction + 'Z';
}
