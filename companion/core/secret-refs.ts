/**
 * Secret references (interface-spec "Webhook integration" secret_ref, "Other route
 * integrations"): a route stores only a reference; the sending worker resolves it at send time.
 *
 *   env://NAME         the process environment variable NAME
 *   secret://path      the operator's reference map (SVC_SECRET_REF_MAP_FILE, a JSON object
 *                      "secret://path" → value), else the deterministic environment variable
 *                      SVC_SECRET_<PATH> (path upper-cased, every other character → "_")
 *   aws-sm://…, gcp-sm://…, azure-kv://…
 *                      cloud secret managers: accepted and granted like the others, reported
 *                      as unresolvable by this build (no cloud credentials here)
 *
 * An operator grants each tenant the exact references it may use (SVC_SECRET_GRANTS, a JSON
 * object tenant_id → [reference, …]); a tenant cannot point the service at any other secret
 * the process can read. Anything that is not a well-formed reference is refused as possible
 * raw secret material, and the message never repeats the value.
 */
import fs from 'node:fs';

export const SECRET_REF_SCHEMES = ['env', 'secret', 'aws-sm', 'gcp-sm', 'azure-kv'] as const;
export type SecretRefScheme = (typeof SECRET_REF_SCHEMES)[number];
const CLOUD_SCHEMES: ReadonlySet<string> = new Set(['aws-sm', 'gcp-sm', 'azure-kv']);

export interface SecretRef {
  ref: string;
  scheme: SecretRefScheme;
  /** What follows `scheme://`. */
  path: string;
}

const REF_RE = /^(env|secret|aws-sm|gcp-sm|azure-kv):\/\/([A-Za-z0-9][A-Za-z0-9._/:@+-]{0,255})$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** The reference, or undefined when `value` is not one (then it may be raw secret material). */
export function parseSecretRef(value: string): SecretRef | undefined {
  const m = REF_RE.exec(value);
  if (!m) return undefined;
  const scheme = m[1] as SecretRefScheme;
  const path = m[2]!;
  if (scheme === 'env' && !ENV_NAME_RE.test(path)) return undefined;
  return { ref: value, scheme, path };
}

/** secret://team/hook-key → SVC_SECRET_TEAM_HOOK_KEY */
export function deterministicEnvName(path: string): string {
  return `SVC_SECRET_${path.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

export type Resolution =
  | { ok: true; value: string; provider: SecretRefScheme }
  | { ok: false; provider: SecretRefScheme | 'unknown'; error: 'not_a_reference' | 'not_granted' | 'not_found' | 'provider_unavailable' | 'map_unreadable' };

export interface SecretResolverOptions {
  /** tenant id → the exact references it may use (SVC_SECRET_GRANTS). */
  grants: Readonly<Record<string, readonly string[]>>;
  /** SVC_SECRET_REF_MAP_FILE: a JSON object of secret:// reference → value, read at resolve time. */
  refMapFile?: string | undefined;
  /** The process environment (read at resolve time, so rotation needs no restart). */
  env?: Record<string, string | undefined>;
}

export class SecretResolver {
  readonly #o: SecretResolverOptions;
  readonly #env: Record<string, string | undefined>;

  constructor(options: SecretResolverOptions) {
    for (const [tenant, refs] of Object.entries(options.grants)) {
      const bad = refs.filter((r) => parseSecretRef(r) === undefined);
      if (bad.length > 0) {
        throw new TypeError(`SVC_SECRET_GRANTS[${JSON.stringify(tenant)}] holds ${bad.length} value(s) that are not secret references (${SECRET_REF_SCHEMES.map((s) => `${s}://…`).join(', ')})`);
      }
    }
    this.#o = options;
    this.#env = options.env ?? process.env;
  }

  isGranted(tenantId: string, ref: string): boolean {
    return (this.#o.grants[tenantId] ?? []).includes(ref);
  }

  /** Resolves a tenant's reference; never returns or logs a value it was not granted. */
  resolve(tenantId: string, value: string): Resolution {
    const ref = parseSecretRef(value);
    if (!ref) return { ok: false, provider: 'unknown', error: 'not_a_reference' };
    if (!this.isGranted(tenantId, ref.ref)) return { ok: false, provider: ref.scheme, error: 'not_granted' };
    return this.#lookup(ref);
  }

  /**
   * Resolves a reference the operator set in the service's own configuration (the payment
   * provider's keys, the PKCS#11 PIN): no tenant chose it, so no tenant grant applies.
   */
  resolveOperator(value: string): Resolution {
    const ref = parseSecretRef(value);
    if (!ref) return { ok: false, provider: 'unknown', error: 'not_a_reference' };
    return this.#lookup(ref);
  }

  #lookup(ref: SecretRef): Resolution {
    if (CLOUD_SCHEMES.has(ref.scheme)) return { ok: false, provider: ref.scheme, error: 'provider_unavailable' };
    let found: string | undefined;
    if (ref.scheme === 'env') {
      found = this.#env[ref.path];
    } else {
      const map = this.#readMap();
      if (map === 'unreadable') return { ok: false, provider: ref.scheme, error: 'map_unreadable' };
      found = map?.[ref.ref] ?? this.#env[deterministicEnvName(ref.path)];
    }
    if (typeof found !== 'string' || found === '') return { ok: false, provider: ref.scheme, error: 'not_found' };
    return { ok: true, value: found, provider: ref.scheme };
  }

  #readMap(): Record<string, string> | undefined | 'unreadable' {
    if (!this.#o.refMapFile) return undefined;
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(this.#o.refMapFile, 'utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'unreadable';
      return parsed as Record<string, string>;
    } catch {
      return 'unreadable';
    }
  }
}
