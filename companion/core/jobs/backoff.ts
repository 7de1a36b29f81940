/**
 * The retry plan of a leased job queue: capped exponential backoff with jitter, then the dead
 * letter (interface-spec States: "failed, then retried with exponential backoff …
 * dead-lettered after several attempts"). The nominal schedule is published (README, and
 * `retryPlan` in API answers) so receivers know how long an outage they can ride out.
 *
 * Attempt n (1-based) failing waits base × factor^(n-1), capped, scaled by a uniform factor in
 * [1 - jitter, 1 + jitter] so endpoints that failed together do not retry in lockstep
 * (AWS Architecture Blog, "Exponential Backoff and Jitter"). After maxAttempts the job is dead.
 */

export interface RetrySchedule {
  baseMs: number;
  factor: number;
  capMs: number;
  /** Fraction of the delay added or taken at random, 0 ≤ jitter < 1. */
  jitter: number;
  /** Attempts in all, the first included; the last failure dead-letters the job. */
  maxAttempts: number;
}

/** 30 s, 1 min, 2 min … capped at 6 h; 12 attempts span about 14.5 hours. */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { baseMs: 30_000, factor: 2, capMs: 6 * 3600_000, jitter: 0.2, maxAttempts: 12 };

/** Milliseconds to wait after failed attempt `attempt` (1-based), jittered by `random` ∈ [0, 1). */
export function retryDelayMs(attempt: number, schedule: RetrySchedule, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`expected an attempt number >= 1, got ${attempt}`);
  const nominal = nominalDelayMs(attempt, schedule);
  return Math.round(nominal * (1 - schedule.jitter + 2 * schedule.jitter * random()));
}

export function nominalDelayMs(attempt: number, schedule: RetrySchedule): number {
  // Exponent capped before Math.pow so a huge attempt count cannot overflow to Infinity.
  const exponent = Math.min(attempt - 1, 64);
  return Math.min(schedule.capMs, schedule.baseMs * schedule.factor ** exponent);
}

/** The published plan: the nominal wait after each failed attempt that is retried. */
export function retryPlan(schedule: RetrySchedule): { max_attempts: number; jitter: number; delays_seconds: number[] } {
  const delays: number[] = [];
  for (let attempt = 1; attempt < schedule.maxAttempts; attempt++) delays.push(nominalDelayMs(attempt, schedule) / 1000);
  return { max_attempts: schedule.maxAttempts, jitter: schedule.jitter, delays_seconds: delays };
}
