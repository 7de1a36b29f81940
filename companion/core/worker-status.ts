/**
 * Liveness of background workers, as a readiness probe reports it: one entry per worker,
 * from the one place that starts them (companion/workers.ts).
 */
export interface WorkerStatus {
  name: string;
  running: boolean;
  /** When the worker last finished a round (RFC 3339), or null before its first. */
  lastTickAt: string | null;
  /** The last round's failure, cleared by the next round that succeeds. */
  lastError: string | null;
  /** How often it runs a round (or polls for work), in milliseconds; the deployment worker plan shows it. */
  intervalMs?: number;
}
