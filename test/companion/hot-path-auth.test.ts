/**
 * The hot path's key cache (core/auth.ts cachedKeyLookup): one credential-version read serves a
 * batch of concurrent requests, yet no request is answered from a read that started before it
 * arrived, so a revocation committed before a request is always seen by it.
 */
import { describe, expect, it } from 'vitest';
import { authenticatePresentedKey, cachedKeyLookup, hashApiKey } from '../../companion/core/auth.ts';
import type { PresentedKeyLookup, ResolvedApiKey, VersionedKeyLookup } from '../../companion/core/auth.ts';

/** One turn of the event loop: reads the key cache defers to its end have started. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

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
    /** Lets the reads due this turn of the event loop start, then answers every read under way. */
    release: async () => {
      await turn();
      for (const answer of pending.splice(0)) answer();
      await turn();
    },
    counts: () => ({ versionReads, keyReads }),
  };
}

const key = `svc_test_${'A'.repeat(43)}`;
const hash = hashApiKey(key);

describe('cachedKeyLookup', () => {
  it('serves a batch of concurrent requests with one version read and one key read', async () => {
    const s = heldStore();
    s.add(hash);
    const lookup = cachedKeyLookup(s.store);
    const first = lookup.resolvePresentedKey(key);
    await s.release();
    expect(await first).toBeDefined();
    const batch = Array.from({ length: 20 }, () => lookup.resolvePresentedKey(key));
    await s.release();
    expect((await Promise.all(batch)).every((k) => k !== undefined)).toBe(true);
    // The warm-up's read, and one read that starts once all twenty have arrived. The key itself
    // is read (and hashed) once.
    expect(s.counts()).toEqual({ versionReads: 2, keyReads: 1 });
  });

  it('never answers a request from a read that started before it: a revocation just before is seen', async () => {
    const s = heldStore();
    s.add(hash);
    const lookup = cachedKeyLookup(s.store);
    const warm = lookup.resolvePresentedKey(key);
    await s.release();
    expect(await warm).toBeDefined();

    const early = lookup.resolvePresentedKey(key);
    await turn(); // its version read is now under way, before the revocation
    s.revoke(hash);
    const late = lookup.resolvePresentedKey(key); // arrives after the revocation committed
    await s.release(); // answers the early read (the old version)
    await s.release(); // the read the late request waits for, started after it arrived
    expect(await early).toBeDefined();
    expect(await late).toBeUndefined();
    expect(s.counts().versionReads).toBe(3);
  });

  it('refuses a key whose hash differs from the stored one, and a malformed key without a read', async () => {
    const s = heldStore();
    s.add(hash);
    const lookup = cachedKeyLookup(s.store);
    const other = `svc_test_${'B'.repeat(43)}`;
    // A store answering with another key's row for this hash: the constant-time comparison refuses it.
    const lying: VersionedKeyLookup = { ...s.store, resolveApiKey: async () => (await s.store.resolveApiKey(hash))! };
    const strict = cachedKeyLookup(lying);
    const refused = strict.resolvePresentedKey(other);
    await s.release();
    expect(await refused).toBeUndefined();
    // Not kept either: the next request with it is refused again.
    const again = strict.resolvePresentedKey(other);
    await s.release();
    expect(await again).toBeUndefined();
    expect(await lookup.resolvePresentedKey('svc_test_short')).toBeUndefined();
    expect(s.counts().versionReads).toBe(2);
  });

  it('checks expiry, prefix and principal on every request though the context is made once per cached key', async () => {
    const entry: ResolvedApiKey = {
      keyId: 'key_1',
      tenantId: 'ten_1',
      tenantKind: 'sandbox',
      keyHash: hash,
      expiresAt: '2030-01-01T00:00:00.000Z',
      lastUsedAt: null,
      principal: { id: 'per_1', kind: 'person', displayName: 'P', capabilities: ['gate:submit'], status: 'active' },
    };
    // The same entry every time, as cachedKeyLookup answers while the credential version holds.
    const lookup: PresentedKeyLookup = {
      resolvePresentedKey: async () => entry,
      resolveApiKey: async () => entry,
      findActiveApiKeyByHash: async () => undefined,
      touchApiKey: async () => undefined,
    };
    const first = await authenticatePresentedKey(lookup, key, '2029-12-31T23:59:59.999Z');
    expect(first).toMatchObject({ tenantId: 'ten_1', keyId: 'key_1', credentialId: 'key_1', principal: { id: 'per_1' } });
    expect(await authenticatePresentedKey(lookup, key, '2029-12-31T23:59:59.999Z')).toBe(first);
    // Expired now: refused although a context for the entry exists.
    await expect(authenticatePresentedKey(lookup, key, '2030-01-01T00:00:00.000Z')).rejects.toMatchObject({ status: 401 });
    // A key of the other kind's prefix for this entry: refused (no mixing of keys).
    await expect(authenticatePresentedKey(lookup, `svc_live_${key.slice('svc_test_'.length)}`, '2029-01-01T00:00:00.000Z')).rejects.toMatchObject({ status: 401 });
  });
});
