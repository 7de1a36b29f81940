/**
 * Secret references (interface-spec "Webhook integration" secret_ref, "Other route
 * integrations"): a route stores only a reference; the sending worker resolves it at send time.
 * The forms are in secrets/refs.ts, the operator's grants in secrets/grants.ts, and the network
 * providers in secrets/aws-secrets-manager.ts and secrets/vault-kv.ts.
 *
 * A tenant may use exactly the references the operator granted it (SVC_SECRET_GRANTS or
 * SVC_SECRET_GRANTS_FILE, "*" for every tenant) and those in its own namespace
 * (secret://tenants/{tenant_id}/…); it cannot point the service at any other secret the
 * process can read. Anything that is not a well-formed reference is refused as possible raw
 * secret material, and no message repeats a value. A scheme without a provider is refused when
 * configured (secret_provider_unavailable), not accepted to fail at every send.
 *
 * The grants file and the reference map are read at start and again on reload() (SIGHUP,
 * main.ts); a file that cannot be used on reload leaves the previous table in force.
 * Network values are cached for a short time (SVC_SECRET_CACHE_SECONDS), and every fetch is
 * bounded by SVC_SECRET_TIMEOUT_MS; a reload empties the cache, so a rotation is picked up
 * at once on SIGHUP.
 */
import type { Config } from './config.ts';
import { awsSecretsManager } from './secrets/aws-secrets-manager.ts';
import { grantsAllow, readGrantsFile, readRefMapFile } from './secrets/grants.ts';
import type { Grants } from './secrets/grants.ts';
import type { SecretProvider } from './secrets/provider.ts';
import { NETWORK_SCHEMES, deterministicEnvName, namespaceOwner, parseSecretRef, schemeAvailable } from './secrets/refs.ts';
import type { ProviderSettings, SecretRef, SecretRefScheme } from './secrets/refs.ts';
import { vaultKv } from './secrets/vault-kv.ts';

export { SECRET_REF_FORMS, SECRET_REF_SCHEMES, deterministicEnvName, parseSecretRef } from './secrets/refs.ts';
export type { SecretRef, SecretRefScheme } from './secrets/refs.ts';

export type ResolutionError = 'not_a_reference' | 'not_granted' | 'not_found' | 'provider_unavailable' | 'provider_error';

export type Resolution =
  | { ok: true; value: string; provider: SecretRefScheme }
  | { ok: false; provider: SecretRefScheme | 'unknown'; error: ResolutionError };

/** Why a tenant may not configure a reference, or null when it may. */
export type RefRefusal = 'not_a_reference' | 'provider_unavailable' | 'not_granted' | null;

export interface SecretResolverOptions extends Partial<ProviderSettings> {
  /** SVC_SECRET_GRANTS: tenant id (or "*") → the exact references it may use. */
  grants?: Grants;
  /** SVC_SECRET_GRANTS_FILE: the same table in a file, re-read on reload(). */
  grantsFile?: string | undefined;
  /** SVC_SECRET_REF_MAP_FILE: a JSON object of secret:// reference → value, re-read on reload(). */
  refMapFile?: string | undefined;
  /** The process environment (read at resolve time). */
  env?: Record<string, string | undefined>;
  awsSmEndpoint?: string | null;
  vaultNamespace?: string | null;
  /** How long one network fetch may take. */
  timeoutMs?: number;
  /** How long a fetched network value is reused; 0: never. */
  cacheMs?: number;
  now?: () => number;
}

/** The resolver options the service's settings describe (SVC_SECRET_*, SVC_AWS_SM_*, SVC_VAULT_*). */
export function secretResolverOptions(config: Config): SecretResolverOptions {
  return {
    grants: config.secretGrants,
    grantsFile: config.secretGrantsFile,
    refMapFile: config.secretRefMapFile,
    awsSmRegion: config.awsSmRegion,
    awsSmEndpoint: config.awsSmEndpoint,
    vaultAddr: config.vaultAddr,
    vaultTokenRef: config.vaultTokenRef,
    vaultNamespace: config.vaultNamespace,
    timeoutMs: config.secretTimeoutMs,
    cacheMs: config.secretCacheSeconds * 1000,
  };
}

export type ReloadResult =
  | { ok: true; grantTenants: number; grantReferences: number; mapEntries: number }
  | { ok: false; setting: 'SVC_SECRET_GRANTS_FILE' | 'SVC_SECRET_REF_MAP_FILE'; problem: string };

export class SecretResolver {
  readonly #o: SecretResolverOptions;
  readonly #env: Record<string, string | undefined>;
  readonly #providerSettings: ProviderSettings;
  readonly #providers = new Map<SecretRefScheme, SecretProvider>();
  readonly #cache = new Map<string, { value: string; until: number }>();
  readonly #now: () => number;
  #grants: Grants;
  #map: Record<string, string> = {};

  /** Reads the grants file and the reference map; throws (one line) when either cannot be used. */
  constructor(options: SecretResolverOptions) {
    this.#o = options;
    this.#env = options.env ?? process.env;
    this.#now = options.now ?? Date.now;
    this.#providerSettings = { awsSmRegion: options.awsSmRegion ?? null, vaultAddr: options.vaultAddr ?? null, vaultTokenRef: options.vaultTokenRef ?? null };
    this.#grants = options.grants ?? {};
    const loaded = this.reload();
    if (!loaded.ok) throw new TypeError(loaded.problem);
    const s = this.#providerSettings;
    if (s.awsSmRegion !== null) this.#providers.set('aws-sm', awsSecretsManager({ region: s.awsSmRegion, endpoint: options.awsSmEndpoint ?? null }));
    if (s.vaultAddr !== null && s.vaultTokenRef !== null) {
      const tokenRef = s.vaultTokenRef;
      this.#providers.set(
        'vault',
        vaultKv({
          addr: s.vaultAddr,
          namespace: options.vaultNamespace ?? null,
          token: async () => {
            // A token kept in Vault could never be read (config.ts refuses it too).
            if (parseSecretRef(tokenRef)?.scheme === 'vault') return undefined;
            const r = await this.resolveOperator(tokenRef);
            return r.ok ? r.value : undefined;
          },
        }),
      );
    }
  }

  /**
   * Re-reads SVC_SECRET_GRANTS_FILE and SVC_SECRET_REF_MAP_FILE (SIGHUP). Both are read and
   * checked before either is used, so a bad file changes nothing. SVC_SECRET_GRANTS, from the
   * environment, cannot change in a running process.
   */
  reload(): ReloadResult {
    let grants = this.#o.grants ?? {};
    if (this.#o.grantsFile !== undefined) {
      const read = readGrantsFile(this.#o.grantsFile, this.#providerSettings);
      if (!read.ok) return { ok: false, setting: 'SVC_SECRET_GRANTS_FILE', problem: read.problem };
      grants = read.grants;
    }
    let map: Record<string, string> = {};
    if (this.#o.refMapFile !== undefined) {
      const read = readRefMapFile(this.#o.refMapFile);
      if (!read.ok) return { ok: false, setting: 'SVC_SECRET_REF_MAP_FILE', problem: read.problem };
      map = read.map;
    }
    this.#grants = grants;
    this.#map = map;
    this.#cache.clear();
    const counts = this.grantCounts();
    return { ok: true, grantTenants: counts.tenants, grantReferences: counts.references, mapEntries: Object.keys(map).length };
  }

  /** Tenants (the "*" entry counts as one) and references in the grants now in force. */
  grantCounts(): { tenants: number; references: number } {
    return { tenants: Object.keys(this.#grants).length, references: Object.values(this.#grants).reduce((n, r) => n + r.length, 0) };
  }

  /** Every reference the grants now in force name (the control plane counts them by scheme). */
  grantedReferences(): string[] {
    return Object.values(this.#grants).flat();
  }

  /** Whether this service, so configured, resolves a scheme at all. */
  provides(scheme: SecretRefScheme): boolean {
    return schemeAvailable(scheme, this.#providerSettings);
  }

  isGranted(tenantId: string, ref: string): boolean {
    return grantsAllow(this.#grants, tenantId, ref);
  }

  /** Why a tenant may not store `value` as a secret reference (checked when configured), or null. */
  refusal(tenantId: string, value: string): RefRefusal {
    const ref = parseSecretRef(value);
    if (!ref) return 'not_a_reference';
    if (!this.provides(ref.scheme)) return 'provider_unavailable';
    if (!this.isGranted(tenantId, value)) return 'not_granted';
    return null;
  }

  /** Resolves a tenant's reference; never returns or logs a value it was not granted. */
  async resolve(tenantId: string, value: string): Promise<Resolution> {
    const ref = parseSecretRef(value);
    if (!ref) return { ok: false, provider: 'unknown', error: 'not_a_reference' };
    if (!this.isGranted(tenantId, ref.ref)) return { ok: false, provider: ref.scheme, error: 'not_granted' };
    return this.#lookup(ref);
  }

  /**
   * Resolves a reference the operator set in the service's own configuration (the payment
   * provider's keys, the PKCS#11 PIN, the Vault token): no tenant chose it, so no tenant grant
   * applies.
   */
  async resolveOperator(value: string): Promise<Resolution> {
    const ref = parseSecretRef(value);
    if (!ref) return { ok: false, provider: 'unknown', error: 'not_a_reference' };
    return this.#lookup(ref);
  }

  close(): void {
    for (const p of this.#providers.values()) p.close?.();
  }

  async #lookup(ref: SecretRef): Promise<Resolution> {
    const provider = this.#providers.get(ref.scheme);
    if (NETWORK_SCHEMES.has(ref.scheme)) {
      if (!provider) return { ok: false, provider: ref.scheme, error: 'provider_unavailable' };
      return this.#fetch(provider, ref);
    }
    if (ref.scheme !== 'env' && ref.scheme !== 'secret') return { ok: false, provider: ref.scheme, error: 'provider_unavailable' };
    let found: string | undefined;
    if (ref.scheme === 'env') {
      found = this.#env[ref.path];
    } else {
      found = Object.hasOwn(this.#map, ref.ref) ? this.#map[ref.ref] : undefined;
      // The deterministic variable folds case and punctuation, so two tenants' namespaced
      // paths could meet in one name: namespaced references come from the map only.
      if (found === undefined && namespaceOwner(ref) === undefined) found = this.#env[deterministicEnvName(ref.path)];
    }
    if (typeof found !== 'string' || found === '') return { ok: false, provider: ref.scheme, error: 'not_found' };
    return { ok: true, value: found, provider: ref.scheme };
  }

  async #fetch(provider: SecretProvider, ref: SecretRef): Promise<Resolution> {
    const cacheMs = this.#o.cacheMs ?? 60_000;
    const hit = this.#cache.get(ref.ref);
    if (hit && hit.until > this.#now()) return { ok: true, value: hit.value, provider: ref.scheme };
    let value: string | undefined;
    try {
      value = await provider.fetch(ref, AbortSignal.timeout(this.#o.timeoutMs ?? 2000));
    } catch {
      // ProviderFailure, or anything else the SDK throws: a send waits on its schedule, never crashes.
      return { ok: false, provider: ref.scheme, error: 'provider_error' };
    }
    if (value === undefined || value === '') return { ok: false, provider: ref.scheme, error: 'not_found' };
    if (cacheMs > 0) this.#cache.set(ref.ref, { value, until: this.#now() + cacheMs });
    return { ok: true, value, provider: ref.scheme };
  }
}
