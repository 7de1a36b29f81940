/**
 * Gate load over one in-process app, shared by the benchmarks that compare the gate with a
 * capability on and off (anchoring, webhooks): 50 law gate requests in flight, and rounds that
 * alternate between the two setups so the machine's drift hits both alike.
 */
import type { createApp } from '../companion/app.ts';
import { GATE_BODY } from './companion-gate.ts';
import { median } from './harness.ts';

const BODY = JSON.stringify(GATE_BODY);
const IN_FLIGHT = 50;

/** Runs the gate for `ms` with 50 requests in flight; resolves with decisions per second. */
export function gateRunner(app: ReturnType<typeof createApp>, apiKey: string): (ms: number) => Promise<number> {
  const send = async () => {
    const res = await app.request('/v1/gate', { method: 'POST', body: BODY, headers: { 'content-type': 'application/json', 'x-service-key': apiKey } });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`gate answered ${res.status}`);
  };
  return async (ms) => {
    let n = 0;
    const start = performance.now();
    const end = start + ms;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => { while (performance.now() < end) (await send(), n++); }));
    return (n * 1000) / (performance.now() - start);
  };
}

/**
 * A warm-up of each, then `rounds` alternating 1-second rounds: the medians of each, and the
 * median of the rounds' on/off ratios (steadier on a shared machine, whose speed drifts
 * between rounds more than within one pair).
 */
export async function alternateRounds(off: (ms: number) => Promise<number>, on: (ms: number) => Promise<number>, rounds = 5): Promise<{ off: number; on: number; ratio: number }> {
  await off(500);
  await on(500);
  const offRates: number[] = [];
  const onRates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    offRates.push(await off(1000));
    onRates.push(await on(1000));
  }
  return { off: median(offRates), on: median(onRates), ratio: median(onRates.map((r, i) => r / offRates[i]!)) };
}
