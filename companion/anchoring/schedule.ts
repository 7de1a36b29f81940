/**
 * When epochs close (DESIGN.md §4, interface-spec Limits "Epoch cadence"): on every multiple
 * of the cadence since the Unix epoch, so hourly epochs close on UTC hour boundaries. An epoch
 * covers the half-open period [period_start, period_end) of recorded_at: a record sealed
 * exactly on a boundary belongs to the epoch that starts there, and to no other.
 */

export interface Period {
  start: Date;
  end: Date;
}

/** The cadence boundary after `at` (strictly after, so `at` on a boundary gives the next one). */
export function boundaryAfter(at: Date, cadenceSeconds: number): Date {
  const ms = cadenceSeconds * 1000;
  return new Date(Math.floor(at.getTime() / ms) * ms + ms);
}

/** The period containing `at`. */
export function periodOf(at: Date, cadenceSeconds: number): Period {
  const end = boundaryAfter(at, cadenceSeconds);
  return { start: new Date(end.getTime() - cadenceSeconds * 1000), end };
}

/**
 * The next period to close: right after the last closed one (its end may sit off the current
 * cadence's grid if the cadence changed; the next period then ends on the next boundary), or
 * the period of the first record ever sealed. Undefined when nothing was ever sealed.
 */
export function nextPeriod(lastEnd: Date | undefined, firstRecordedAt: Date | undefined, cadenceSeconds: number): Period | undefined {
  if (lastEnd) return { start: lastEnd, end: boundaryAfter(lastEnd, cadenceSeconds) };
  return firstRecordedAt && periodOf(firstRecordedAt, cadenceSeconds);
}
