/**
 * The tenant's current policy overlay for a pack, as the gate applies it (interface-spec
 * "What the service does": "applies the pack and the tenant's policy overlay").
 *
 * The gate is the hot path, so overlays are cached in memory and the gate does no extra query
 * per request. The cache belongs to one store (a WeakMap keyed by it, so separate databases,
 * as in tests, never share entries). It is correct because one process owns the database
 * (DESIGN.md §2: an embedded SQLite file; on PostgreSQL, where several companions share one,
 * the current version is read instead) and every write of a policy version goes through
 * policy/versions.ts, which drops the entry inside the transaction that appends the version,
 * so the next read after the commit reloads it. A miss caches its pending read at once: a read
 * still in flight when a version is appended is dropped with the entry instead of landing in
 * the cache afterwards with the replaced version. A tenant without a policy is cached too (as
 * EMPTY_OVERLAY), since that is the common case. The cache is bounded; the least recently used
 * entry goes first.
 */
import { EMPTY_OVERLAY } from './policy-overlay.ts';
import type { PolicyOverlay } from './policy-overlay.ts';
import { overlayOf } from './document.ts';
import type { PolicyDocument } from './document.ts';
import type { Store } from '../core/stores.ts';
import type { PolicyStore, PolicyVersionRow } from './store.ts';

/** Tenants × gate packs held at once; a miss costs one primary-key lookup. */
export const OVERLAY_CACHE_MAX = 10_000;

const caches = new WeakMap<PolicyStore, Map<string, Promise<PolicyOverlay>>>();

function cacheOf(store: PolicyStore): Map<string, Promise<PolicyOverlay>> {
  let cache = caches.get(store);
  if (!cache) {
    cache = new Map();
    caches.set(store, cache);
  }
  return cache;
}

const keyOf = (tenantId: string, policyPack: string) => `${tenantId} ${policyPack}`;

/** The overlay a stored version stands for; EMPTY_OVERLAY when there is none. */
export function overlayOfVersion(row: PolicyVersionRow | undefined): PolicyOverlay {
  return row ? overlayOf(JSON.parse(row.document) as PolicyDocument, row.digest) : EMPTY_OVERLAY;
}

export function currentOverlay(store: Pick<Store, 'engine' | 'policy'>, tenantId: string, policyPack: string): Promise<PolicyOverlay> {
  // Only one process writes an embedded SQLite file. On PostgreSQL another companion may append
  // a version this process never hears of, so the current one is read every time.
  if (store.engine !== 'sqlite') return store.policy.current(tenantId, policyPack).then(overlayOfVersion);
  const cache = cacheOf(store.policy);
  const key = keyOf(tenantId, policyPack);
  let overlay = cache.get(key);
  if (overlay) {
    cache.delete(key); // re-inserted below: a Map iterates in insertion order, oldest first
  } else {
    const loading = store.policy.current(tenantId, policyPack).then(overlayOfVersion);
    // A failed read is not remembered: the next request asks again.
    loading.catch(() => {
      if (cache.get(key) === loading) cache.delete(key);
    });
    overlay = loading;
    if (cache.size >= OVERLAY_CACHE_MAX) cache.delete(cache.keys().next().value!);
  }
  cache.set(key, overlay);
  return overlay;
}

/** Drops the cached overlay; called in the transaction that appends a version. */
export function forgetOverlay(store: PolicyStore, tenantId: string, policyPack: string): void {
  caches.get(store)?.delete(keyOf(tenantId, policyPack));
}
