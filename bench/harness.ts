/**
 * A tiny benchmark harness. Machines here are shared and noisy (runs drift up to 1.5x), so
 * every figure is printed beside a baseline measured in the same run, as a ratio; absolute
 * numbers are context, never a claim.
 */

export interface Rate {
  name: string;
  opsPerSec: number;
}

/** Median ops/s over `rounds` rounds of about `roundMs` each, after a warm-up round. */
export function measure(name: string, fn: () => unknown, { roundMs = 300, rounds = 5 } = {}): Rate {
  const calibrate = (ms: number) => {
    let n = 0;
    const end = performance.now() + ms;
    while (performance.now() < end) {
      fn();
      n++;
    }
    return n;
  };
  calibrate(roundMs / 2); // warm-up: JIT and caches
  const batch = Math.max(1, Math.round(calibrate(50) / 5));
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let n = 0;
    const start = performance.now();
    const end = start + roundMs;
    let now = start;
    while (now < end) {
      for (let i = 0; i < batch; i++) fn();
      n += batch;
      now = performance.now();
    }
    rates.push((n * 1000) / (now - start));
  }
  return { name, opsPerSec: median(rates) };
}

export async function measureAsync(name: string, fn: () => Promise<unknown>, { roundMs = 300, rounds = 5 } = {}): Promise<Rate> {
  for (let end = performance.now() + roundMs / 2; performance.now() < end; ) await fn();
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let n = 0;
    const start = performance.now();
    let now = start;
    while (now < start + roundMs) {
      await fn();
      n++;
      now = performance.now();
    }
    rates.push((n * 1000) / (now - start));
  }
  return { name, opsPerSec: median(rates) };
}

/** Wall time of one run of fn, in milliseconds (for one-shot jobs such as a 1e6-leaf tree). */
export function time(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

export function section(title: string): void {
  console.log(`\n## ${title}`);
}

/** Prints each rate as ops/s and as a ratio to the baseline. */
export function compare(baseline: Rate, ...others: Rate[]): void {
  const width = Math.max(...[baseline, ...others].map((r) => r.name.length));
  console.log(`  ${baseline.name.padEnd(width)}  ${fmt(baseline.opsPerSec).padStart(12)} ops/s  (baseline)`);
  for (const r of others) {
    console.log(`  ${r.name.padEnd(width)}  ${fmt(r.opsPerSec).padStart(12)} ops/s  ${(r.opsPerSec / baseline.opsPerSec).toFixed(2)}x baseline`);
  }
}

export function line(label: string, value: string): void {
  console.log(`  ${label}: ${value}`);
}
