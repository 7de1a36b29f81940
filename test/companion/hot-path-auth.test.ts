/**
 * The hot path's key cache (core/auth.ts cachedKeyLookup): one credential-version read serves a
 * batch of concurrent requests, yet no request is answered from a read that started before it
 * arrived, so a revocation committed before a request is always seen by it.
 */
import { describe, expect, it } from 'vitest';
import { cachedKeyLookup, hashApiKey } from '../../companion/core/auth.ts';
import type { ResolvedApiKey, VersionedKeyLookup } from '../../companion/core/auth.ts';

/** A key store whose version reads wait until released, so a test decides when each one answers. */
function heldStore() {
  let version = 0;
  const active = new Set<string>();
  const pending: (() => void)[] = [];
  let versionReads = 0;
  let keyReads = 0;
  const row = (hash: Uint8Array): ResolvedApiKey => ({
    keyId: 'key_1',
    tenantId: 'ten_1',
    tenantKind: 'sandbox',
    keyHash: hash,
    expiresAt: null,
    lastUsedAt: null,
    principal: { id: 'per_1', kind: 'person', displayName: 'P', capabilities: ['gate:submit'], status: 'active' },
  });
  const store: VersionedKeyLookup = {
    credentialVersion: () => {
      versionReads++;
      // The value is read when the query runs, as a database would; it answers when released.
      const seen = version;
      return new Promise((resolve) => pending.push(() => resolve(seen)));
    },
    resolveApiKey: async (hash) => {
      keyReads++;
      return active.has(Buffer.from(hash).toString('hex')) ? row(hash) : undefined;
    },
    findActiveApiKeyByHash: async () => undefined,
    touchApiKey: async () => {},
  };
  return {
    store,
    add: (hash: Uint8Array) => active.add(Buffer.from(hash).toString('hex')),
    revoke: (hash: Uint8Array) => (active.delete(Buffer.from(hash).toString('hex')), version++),
    release: async () => {
      for (const answer of pending.splice(0)) answer();
      await new Promise((r) => setImmediate(r));
    },
    counts: () => ({ versionReads, keyReads }),
  };
}

const hash = hashApiKey(`svc_test_${'A'.repeat(43)}`);

describe('cachedKeyLookup', () => {
  it('serves a batch of concurrent requests with two version reads at most and one key read', async () => {
    const s = heldStore();
    s.add(hash);
    const lookup = cachedKeyLookup(s.store);
    const first = lookup.resolveApiKey(hash);
    await s.release();
    expect(await first).toBeDefined();
    const batch = Array.from({ length: 20 }, () => lookup.resolveApiKey(hash));
    await s.release();
    await s.release();
    expect((await Promise.all(batch)).every((k) => k !== undefined)).toBe(true);
    // The warm-up's read; the batch's first request starts one, and the other nineteen, having
    // arrived after it started, share the next: two for twenty. The key itself is read once.
    expect(s.counts()).toEqual({ versionReads: 3, keyReads: 1 });
  });

  it('never answers a request from a read that started before it: a revocation just before is seen', async () => {
    const s = heldStore();
    s.add(hash);
    const lookup = cachedKeyLookup(s.store);
    const warm = lookup.resolveApiKey(hash);
    await s.release();
    expect(await warm).toBeDefined();

    const early = lookup.resolveApiKey(hash); // its version read is now under way, before the revocation
    s.revoke(hash);
    const late = lookup.resolveApiKey(hash); // arrives after the revocation committed
    await s.release(); // answers the early read (the old version)
    await s.release(); // the read the late request waits for, started after it arrived
    expect(await early).toBeDefined();
    expect(await late).toBeUndefined();
  });
});
