/**
 * Trust in the companion's signing keys: the background fetches
 * /.well-known/service-keys.json and pins each key by its id on first sight. A known id that
 * later comes with different key material is an alarm, never accepted silently: seals are only
 * ever checked against the pinned key. Status changes are followed (a key may be retired or
 * revoked), except that a revoked key never becomes trusted again.
 *
 * Key ids are RFC 7638 thumbprints (README, "Verify evidence offline"), so a published set that
 * names a key with another key's id is refused at pinning time as well.
 */
import { keyId, parseJwks, jwkToPublicKey } from '../../../shared/keys.ts';
import { trustedKeySet } from '../../../shared/trusted-keys.ts';
import type { TrustedKeySet } from '../../../shared/trusted-keys.ts';
import type { ServiceJwk } from '../../../shared/types.ts';
import type { ExtensionDatabase, KeyAlarm, PinnedKey } from '../db.ts';

/** Published keys change rarely; a revocation should still reach us within minutes. */
export const KEYS_REFRESH_MS = 5 * 60_000;
export const JWKS_PATH = '/.well-known/service-keys.json';

export interface KeyPinsDeps {
  db: ExtensionDatabase;
  fetchJwks: () => Promise<unknown>;
  now: () => Date;
}

export interface TrustedKeysFor {
  keys: TrustedKeySet;
  /** True when an alarm stands for this key id. */
  alarm: boolean;
}

export class KeyPins {
  /** In memory only: a restarted service worker simply refreshes once more. */
  private lastRefresh = -Infinity;
  /** The pinned set and the key ids with alarms, read once per refresh (every seal needs them). */
  private cached: { keys: TrustedKeySet; alarmed: ReadonlySet<string> } | null = null;

  constructor(private readonly deps: KeyPinsDeps) {}

  /** Pinned keys only. Refreshes first when `kid` is not pinned yet or the pins are stale. */
  async keysFor(kid: string): Promise<TrustedKeysFor> {
    let pins = await this.pins();
    const stale = this.deps.now().getTime() - this.lastRefresh > KEYS_REFRESH_MS;
    if (!pins.keys.has(kid) || stale) {
      await this.refresh().catch(() => undefined);
      pins = await this.pins();
    }
    return { keys: pins.keys, alarm: pins.alarmed.has(kid) };
  }

  /** Fetches the published keys and applies them to the pins; returns the alarms it raised. */
  async refresh(): Promise<KeyAlarm[]> {
    const jwks = await this.deps.fetchJwks();
    this.lastRefresh = this.deps.now().getTime();
    this.cached = null;
    return applyPublishedKeys(this.deps.db, parseJwks(jwks).keys, this.deps.now().toISOString());
  }

  async pinnedSet(): Promise<TrustedKeySet> {
    return (await this.pins()).keys;
  }

  private async pins(): Promise<{ keys: TrustedKeySet; alarmed: ReadonlySet<string> }> {
    if (this.cached) return this.cached;
    const { db } = this.deps;
    const [pins, alarms] = await db.transaction('r', db.pinnedKeys, db.keyAlarms, () => Promise.all([db.pinnedKeys.toArray(), db.keyAlarms.toArray()]));
    this.cached = { keys: trustedKeySet({ keys: pins.map(toJwk) }), alarmed: new Set(alarms.map((a) => a.kid)) };
    return this.cached;
  }
}

/** The pinning rules, applied key by key in one transaction. */
export async function applyPublishedKeys(db: ExtensionDatabase, published: readonly ServiceJwk[], now: string): Promise<KeyAlarm[]> {
  const raised: KeyAlarm[] = [];
  await db.transaction('rw', db.pinnedKeys, db.keyAlarms, async () => {
    for (const jwk of published) {
      const pinned = await db.pinnedKeys.get(jwk.kid);
      const alarm = (kind: KeyAlarm['kind'], detail: string) => raised.push({ time: now, kid: jwk.kid, kind, detail });
      if (pinned === undefined) {
        if (keyId(jwkToPublicKey(jwk)) !== jwk.kid) {
          alarm('kid-mismatch', `published key id ${jwk.kid} is not the RFC 7638 thumbprint of its key; not pinned`);
          continue;
        }
        await db.pinnedKeys.add({ kid: jwk.kid, kty: jwk.kty, crv: jwk.crv, x: jwk.x, status: jwk.status, dev_key: jwk.dev_key, first_seen: now, last_seen: now });
        continue;
      }
      if (pinned.x !== jwk.x || pinned.crv !== jwk.crv || pinned.kty !== jwk.kty) {
        alarm('key-changed', `key id ${jwk.kid} was pinned to x=${pinned.x} on ${pinned.first_seen}; the companion now publishes x=${jwk.x}. The pinned key stays in use.`);
        continue;
      }
      if (pinned.dev_key !== jwk.dev_key) {
        alarm('dev-key-changed', `key ${jwk.kid} was pinned with dev_key=${pinned.dev_key}; now published with dev_key=${jwk.dev_key}. Not accepted.`);
        continue;
      }
      let status = jwk.status as string;
      if (pinned.status === 'revoked' && status !== 'revoked') {
        alarm('key-unrevoked', `key ${jwk.kid} was revoked and is now published as ${status}. It stays revoked.`);
        status = 'revoked';
      }
      await db.pinnedKeys.update(jwk.kid, { status, last_seen: now });
    }
    for (const a of raised) {
      const same = await db.keyAlarms.where('kid').equals(a.kid).filter((x) => x.kind === a.kind && x.detail === a.detail).count();
      if (same === 0) await db.keyAlarms.add(a);
    }
  });
  return raised;
}

function toJwk(p: PinnedKey): ServiceJwk {
  return { kty: 'OKP', crv: 'Ed25519', x: p.x, kid: p.kid, status: p.status as ServiceJwk['status'], dev_key: p.dev_key };
}
