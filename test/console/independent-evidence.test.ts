/**
 * The console's record detail in real Chromium says "Independently timestamped by <TSA>, <time>"
 * and "Witnessed by 1 witness: <name>" for a record whose epoch has an RFC 3161 token from a
 * real TSA on loopback (openssl ts -reply, test/helpers/loopback-tsa.ts) and a cosignature from
 * a C2SP witness stand-in (test/helpers/loopback-witness.ts), both checked in the browser; a
 * record whose epoch has neither yet shows "awaiting timestamp" and no such badge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointOrigin } from '../../companion/anchoring/epochs.ts';
import { logVerifierKeyText } from '../../shared/witness.ts';
import { recordBody } from '../companion/pack-fixtures.ts';
import { cleanupAuthorities, startTsa } from '../helpers/loopback-tsa.ts';
import type { TsaAuthority } from '../helpers/loopback-tsa.ts';
import { WitnessStandIn } from '../helpers/loopback-witness.ts';
import { checkPage, openConsole, signIn } from './harness.ts';
import type { ConsoleWorld } from './harness.ts';

let world: ConsoleWorld;
let tsa: TsaAuthority;
let witness: WitnessStandIn;

beforeAll(async () => {
  tsa = await startTsa('Console');
  witness = new WitnessStandIn('console.test/w1', 0x4d);
  await witness.listen();
  world = await openConsole({
    SVC_TSA_URLS: tsa.url,
    SVC_TSA_ROOTS_FILE: tsa.caFile,
    SVC_WITNESSES: JSON.stringify([{ name: witness.name, url: witness.url, key: witness.vkey }]),
    SVC_WEBHOOK_ALLOW_LOOPBACK: '1',
  });
  const signer = world.ctx.deps.keyring.production;
  const origin = checkpointOrigin(signer);
  witness.trustLog(origin, logVerifierKeyText(origin, signer.publicKey));
  await signIn(world);
}, 120_000);
afterAll(async () => {
  await world?.close();
  await Promise.all([tsa?.close(), witness?.close()]);
  cleanupAuthorities();
});

async function sealRecord(): Promise<string> {
  const res = await world.ctx.request('/v1/record', { json: recordBody(), key: world.apiKey });
  expect(res.status).toBe(201);
  return res.body.evidence_packet.action_key as string;
}

/** Ends the hour and closes its epoch. */
async function closeEpoch(): Promise<void> {
  world.ctx.clock.advance(3600_000);
  expect((await world.ctx.deps.workers.epochs.closeDue()).length).toBeGreaterThan(0);
}

async function openRecord(actionKey: string): Promise<void> {
  const { page } = world;
  await page.goto(`${world.url}/console#/records/${actionKey}`);
  await page.locator('.badge', { hasText: /anchored, epoch|waiting for the epoch/ }).first().waitFor();
}

describe('Record detail: independent evidence', () => {
  it('shows the verified timestamp and witness for a timestamped and witnessed epoch, and neither before', async () => {
    const { page } = world;
    const stamped = await sealRecord();
    await closeEpoch();

    // Closed, but its token and cosignature have not arrived: awaiting, nothing independent claimed.
    await openRecord(stamped);
    await expect.poll(() => page.locator('.badge', { hasText: 'awaiting timestamp' }).count()).toBe(1);
    expect(await page.locator('.badge', { hasText: /Independently timestamped|Witnessed by|cosigned by/ }).count()).toBe(0);

    expect(await world.ctx.deps.workers.timestamps.worker.tick()).toMatchObject({ succeeded: 1 });
    expect(await world.ctx.deps.workers.witnesses.worker.tick()).toMatchObject({ succeeded: 1 });
    await page.reload();
    const timestamped = page.locator('.badge', { hasText: 'Independently timestamped by' });
    await timestamped.waitFor();
    // The TSA named by its certificate's subject (loopback-tsa.ts names it after the authority).
    expect(await timestamped.textContent()).toMatch(/^Independently timestamped by .*Console.*, \S/);
    const witnessed = page.locator('.badge', { hasText: 'Witnessed by' });
    await witnessed.waitFor();
    expect(await witnessed.textContent()).toBe(`Witnessed by 1 witness: ${witness.name}`);
    expect(await page.locator('.badge', { hasText: 'awaiting timestamp' }).count()).toBe(0);
    await checkPage(world, 'record-independent');

    // A record of the next, still open hour: waiting for its epoch, no independent badge.
    const open = await sealRecord();
    await openRecord(open);
    await expect.poll(() => page.locator('.badge', { hasText: 'waiting for the epoch' }).count()).toBe(1);
    expect(await page.locator('.badge', { hasText: /Independently timestamped|Witnessed by|awaiting timestamp/ }).count()).toBe(0);
  });
});
