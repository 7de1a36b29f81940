/**
 * rfc3339 (core/clock.ts): the evidence format's timestamps (DESIGN.md §3) are exactly
 * Date.prototype.toISOString's text, also where it writes the same second's text again from
 * what it kept, across second boundaries, before 1970 and in six-digit years.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rfc3339 } from '../../companion/core/clock.ts';

describe('rfc3339', () => {
  it('writes what toISOString writes, for every millisecond of a second and the seconds around it', () => {
    for (const base of [0, 1_764_355_200_000, -1_000, -86_400_000, 253_402_300_799_000, -62_167_219_200_000]) {
      for (let ms = base - 1_005; ms < base + 2_005; ms++) expect(rfc3339(new Date(ms))).toBe(new Date(ms).toISOString());
    }
  });

  it('writes what toISOString writes for any date, in any order of calls', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -8.64e15, max: 8.64e15 - 1_000 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 999 }), (times, step) => {
        for (const t of times) {
          expect(rfc3339(new Date(t))).toBe(new Date(t).toISOString());
          expect(rfc3339(new Date(t + step))).toBe(new Date(t + step).toISOString());
        }
      }),
      { numRuns: 500 },
    );
  });

  it('writes what toISOString writes when calls alternate between two seconds and a third comes between', () => {
    const now = 1_764_355_200_123;
    const dayBefore = now - 86_400_000;
    for (let i = 0; i < 50; i++) {
      for (const t of [now + i, dayBefore + i, now + 3_600_000 + i, dayBefore - i]) expect(rfc3339(new Date(t))).toBe(new Date(t).toISOString());
    }
  });

  it('refuses an invalid date as toISOString does, even right after a valid one', () => {
    expect(rfc3339(new Date(0))).toBe('1970-01-01T00:00:00.000Z');
    expect(() => rfc3339(new Date(Number.NaN))).toThrow(RangeError);
  });
});
