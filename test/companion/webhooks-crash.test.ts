/**
 * At-least-once delivery across a crash (issue: the worker survives kill -9 mid-delivery): the
 * companion runs as a real process, its deliveries are held open by a loopback receiver, the
 * process is killed with SIGKILL, and after a restart every delivery arrives with the same
 * X-Service-Id it had before. Nothing is lost, nothing is marked delivered that was not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupCompanions, start, tempDataDir } from '../helpers/companion-process.ts';
import { recordBody } from './pack-fixtures.ts';
import { startReceiver } from './webhook-receiver.ts';
import type { Receiver } from './webhook-receiver.ts';

let rx: Receiver | undefined;
afterEach(async () => {
  cleanupCompanions();
  await rx?.close();
});

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 50));
}

describe('webhook delivery across kill -9', () => {
  it('redelivers every in-flight delivery after a restart, with the same ids', async () => {
    rx = await startReceiver();
    // Every request stays in flight until the process dies. The lease (8 s) outlasts the time
    // this takes, so the first process never gives up on its own before the kill.
    rx.hold = true;
    const dataDir = tempDataDir();
    const env = { SVC_WEBHOOK_ALLOW_LOOPBACK: '1', SVC_WEBHOOK_LEASE_SECONDS: '8' };
    const first = await start(dataDir, env);
    const call = (base: string, path: string, init: RequestInit & { key?: string } = {}) =>
      fetch(`${base}${path}`, { ...init, headers: { 'content-type': 'application/json', ...(init.key ? { 'x-service-key': init.key } : {}) } });

    const signup = await (await call(first.url, '/signup/checkout', { method: 'POST', body: JSON.stringify({ email: `crash.${process.pid}@example.com` }) })).json();
    const key: string = signup.api_key;
    const put = await call(first.url, '/tenant/integrations/webhook/ops', { method: 'PUT', key, body: JSON.stringify({ enabled: true, config: { url: rx.url, events: ['record.sealed'] } }) });
    expect(put.status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await call(first.url, '/v1/record', { method: 'POST', key, body: JSON.stringify(recordBody()) })).status).toBe(201);

    await until(() => rx!.received.length === 5);
    const before = rx.received.map((r) => String(r.headers['x-service-id'])).sort();
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    rx.hold = false;
    rx.status = 200;
    const second = await start(dataDir, env);
    await until(() => rx!.received.length >= 10);
    const after = rx.received.slice(5).map((r) => String(r.headers['x-service-id'])).sort();
    expect(after).toEqual(before);

    // The receiver's answers are stored a moment after it has seen the requests.
    const deliveries = async () => (await (await call(second.url, '/tenant/integrations/webhook/ops/deliveries', { key })).json()) as { deliveries: { status: string }[] };
    await until(async () => (await deliveries()).deliveries.every((d) => d.status === 'delivered'));
    const list = await deliveries();
    expect(list.deliveries).toHaveLength(5);
    for (const d of list.deliveries) expect(d).toMatchObject({ status: 'delivered', attempt_count: 2, last_error: null });
  });
});
