/**
 * The background's local store: Dexie schema, the decision log with its
 * exactly-once release claim, key pinning by id with alarms, and the JSON export. Dexie runs on
 * fake-indexeddb.
 */
import 'fake-indexeddb/auto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getPublicKey } from '../../shared/ed25519.ts';
import { publicKeyToJwk, sandboxJwk } from '../../shared/keys.ts';
import type { ServiceJwk } from '../../shared/types.ts';
import { DecisionLog } from '../../extension/utils/background/decision-log.ts';
import { KeyPins, applyPublishedKeys } from '../../extension/utils/background/key-pins.ts';
import { openExtensionDatabase } from '../../extension/utils/db.ts';
import type { DecisionEntry, ExtensionDatabase } from '../../extension/utils/db.ts';

let db: ExtensionDatabase;
let n = 0;
const NOW = '2026-01-01T00:00:00.000Z';

beforeEach(() => {
  db = openExtensionDatabase(`log-test-${process.pid}-${++n}`);
});

afterEach(async () => {
  await db.delete();
});

function decision(actionKey: string, over: Partial<DecisionEntry> = {}): DecisionEntry {
  return {
    action_key: actionKey,
    decision: 'needs_review',
    site: 'claude',
    host: 'claude.ai',
    time: NOW,
    recorded_at: NOW,
    verified: true,
    key_status: 'sandbox',
    dev_key: true,
    failed_checks: [],
    review_route: 'browser:legal-review',
    redactions: {},
    review_status: 'pending',
    reviewer: null,
    review_receipt_key: null,
    review_verified: null,
    review_time: null,
    released_attempt: null,
    ...over,
  };
}

function keyFor(seedByte: number, meta: Partial<ServiceJwk> = {}): ServiceJwk {
  return { ...publicKeyToJwk(getPublicKey(new Uint8Array(32).fill(seedByte)), { status: 'active', dev_key: false }), ...meta };
}

describe('decision log', () => {
  it('hands out a release once: to the first attempt, again to the same attempt, never to another', async () => {
    const log = new DecisionLog(db);
    await log.recordDecision(decision('law:proposed-action:1'));
    expect(await log.claimRelease('law:proposed-action:1', 'attempt-a')).toBe(true);
    expect(await log.claimRelease('law:proposed-action:1', 'attempt-a')).toBe(true);
    expect(await log.claimRelease('law:proposed-action:1', 'attempt-b')).toBe(false);
    expect(await log.claimRelease('law:unknown:2', 'attempt-a')).toBe(false);
  });

  it('a replayed decision keeps the first entry\'s release and review state', async () => {
    const log = new DecisionLog(db);
    await log.recordDecision(decision('k1'));
    await log.claimRelease('k1', 'attempt-a');
    await log.recordReview('k1', { status: 'approved', reviewer: 'r', receiptKey: 'law:review:9', verified: true, time: NOW });
    await log.recordDecision(decision('k1', { time: '2026-01-01T00:00:05.000Z' }));
    expect(await log.get('k1')).toMatchObject({ released_attempt: 'attempt-a', review_status: 'approved', review_verified: true, time: '2026-01-01T00:00:05.000Z' });
  });

  it('exports everything as JSON, newest last, with the format named', async () => {
    const log = new DecisionLog(db);
    await log.recordDecision(decision('b', { time: '2026-01-01T00:00:02.000Z' }));
    await log.recordDecision(decision('a', { time: '2026-01-01T00:00:01.000Z' }));
    await log.recordIncident({ time: NOW, site: 'gemini', host: 'gemini.google.com', kind: 'unreachable', detail: 'down', fail_mode: 'closed', released: false });
    const out = await log.export(new Date(NOW));
    expect(out.format).toBe('action-gate.extension-log/v1');
    expect(out.decisions.map((d) => d.action_key)).toEqual(['a', 'b']);
    expect(out.incidents).toHaveLength(1);
    expect(JSON.parse(JSON.stringify(out))).toEqual(out);
    expect((await log.recent(1)).map((d) => d.action_key)).toEqual(['b']);
  });

  it('opening the database twice changes nothing (one schema, versioned in utils/db.ts)', async () => {
    await new DecisionLog(db).recordDecision(decision('k'));
    const again = openExtensionDatabase(db.name);
    await again.open();
    expect(again.verno).toBe(db.verno);
    expect(await again.decisions.count()).toBe(1);
    again.close();
  });
});

describe('key pins', () => {
  it('pins each published key by its id on first sight', async () => {
    const raised = await applyPublishedKeys(db, [sandboxJwk(), keyFor(7)], NOW);
    expect(raised).toEqual([]);
    expect((await db.pinnedKeys.toArray()).map((k) => k.kid).sort()).toEqual([sandboxJwk().kid, keyFor(7).kid].sort());
  });

  it('a known id with different key material is an alarm, and the pinned key stays', async () => {
    const original = keyFor(7);
    await applyPublishedKeys(db, [original], NOW);
    const swapped = { ...keyFor(8), kid: original.kid };
    const raised = await applyPublishedKeys(db, [swapped], NOW);
    expect(raised).toEqual([expect.objectContaining({ kid: original.kid, kind: 'key-changed' })]);
    expect((await db.pinnedKeys.get(original.kid))?.x).toBe(original.x);
    // The same alarm is stored once, however often the companion repeats it.
    await applyPublishedKeys(db, [swapped], NOW);
    expect(await db.keyAlarms.count()).toBe(1);
  });

  it('refuses to pin a key whose id is not its thumbprint', async () => {
    const raised = await applyPublishedKeys(db, [{ ...keyFor(9), kid: 'not-a-thumbprint' }], NOW);
    expect(raised[0]?.kind).toBe('kid-mismatch');
    expect(await db.pinnedKeys.count()).toBe(0);
  });

  it('follows retire and revoke, but a revoked key never comes back', async () => {
    const k = keyFor(5);
    await applyPublishedKeys(db, [k], NOW);
    await applyPublishedKeys(db, [{ ...k, status: 'revoked' }], NOW);
    const raised = await applyPublishedKeys(db, [{ ...k, status: 'active' }], NOW);
    expect(raised[0]?.kind).toBe('key-unrevoked');
    expect((await db.pinnedKeys.get(k.kid))?.status).toBe('revoked');
  });

  it('trusts pinned keys only, and reports an alarm for a changed one', async () => {
    const original = keyFor(3);
    let published: ServiceJwk[] = [original];
    const pins = new KeyPins({ db, now: () => new Date(), fetchJwks: async () => ({ keys: published }) });
    expect([...(await pins.keysFor(original.kid)).keys.keys()]).toEqual([original.kid]);
    published = [{ ...keyFor(4), kid: original.kid }];
    await pins.refresh();
    const trusted = await pins.keysFor(original.kid);
    expect(trusted.alarm).toBe(true);
    expect(trusted.keys.get(original.kid)?.kidMatchesKey).toBe(true);
  });
});
