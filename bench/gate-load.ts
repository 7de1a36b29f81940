/**
 * Gate load over one in-process app, shared by the benchmarks that compare the gate with a
 * capability on and off (anchoring, webhooks): 50 law gate requests in flight, and rounds that
 * alternate between the setups so the machine's drift hits them alike.
 */
import type { createApp } from '../companion/app.ts';
import { GATE_BODY } from './companion-gate.ts';
import { median } from './harness.ts';

const BODY = JSON.stringify(GATE_BODY);
const IN_FLIGHT = 50;

/**
 * Runs the gate for `ms` with 50 requests in flight; resolves with decisions per second.
 * `answered` is called after each answer, before the next request is sent.
 */
export function gateRunner(app: ReturnType<typeof createApp>, apiKey: string, answered?: () => void): (ms: number) => Promise<number> {
  const send = async () => {
    const res = await app.request('/v1/gate', { method: 'POST', body: BODY, headers: { 'content-type': 'application/json', 'x-service-key': apiKey } });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`gate answered ${res.status}`);
    answered?.();
  };
  return async (ms) => {
    let n = 0;
    const start = performance.now();
    const end = start + ms;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => { while (performance.now() < end) (await send(), n++); }));
    return (n * 1000) / (performance.now() - start);
  };
}

type Runner = (ms: number) => Promise<number>;

/**
 * A warm-up of each, then `rounds` rounds of 1 second of each in turn: the median rate of
 * each, and the median of the rounds' ratios of each to the first (steadier on a shared
 * machine, whose speed drifts between rounds more than within one).
 */
export async function alternate(runners: readonly Runner[], rounds = 5): Promise<{ rates: number[]; ratios: number[] }> {
  for (const run of runners) await run(500);
  const perRound: number[][] = [];
  for (let round = 0; round < rounds; round++) {
    const rates: number[] = [];
    for (const run of runners) rates.push(await run(1000));
    perRound.push(rates);
  }
  return {
    rates: runners.map((_, i) => median(perRound.map((r) => r[i]!))),
    ratios: runners.map((_, i) => median(perRound.map((r) => r[i]! / r[0]!))),
  };
}

/** alternate() for two: a setup without a capability and with it. */
export async function alternateRounds(off: Runner, on: Runner, rounds = 5): Promise<{ off: number; on: number; ratio: number }> {
  const { rates, ratios } = await alternate([off, on], rounds);
  return { off: rates[0]!, on: rates[1]!, ratio: ratios[1]! };
}
