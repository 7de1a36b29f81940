/**
 * The secret reference forms (interface-spec "Webhook integration" secret_ref, "Other route
 * integrations"): a route stores only a reference, never a value.
 *
 *   env://NAME               the process environment variable NAME
 *   secret://path            the operator's reference map (SVC_SECRET_REF_MAP_FILE), else the
 *                            deterministic environment variable SVC_SECRET_<PATH>
 *   secret://tenants/{tenant_id}/…
 *                            a tenant's own namespace: granted to that tenant alone, without a
 *                            grant entry, and resolved from the reference map only
 *   aws-sm://name-or-arn[#key]   AWS Secrets Manager (SecretString; #key picks a JSON field)
 *   vault://mount/path#field     HashiCorp Vault KV v2 (field of the secret's data)
 *   gcp-sm://…, azure-kv://…     recognised forms this build cannot resolve: refused when
 *                                configured, never accepted to fail later
 */

export const SECRET_REF_SCHEMES = ['env', 'secret', 'aws-sm', 'vault', 'gcp-sm', 'azure-kv'] as const;
export type SecretRefScheme = (typeof SECRET_REF_SCHEMES)[number];

/** Schemes resolved over the network, by an operator-configured provider. */
export const NETWORK_SCHEMES: ReadonlySet<SecretRefScheme> = new Set(['aws-sm', 'vault']);

export interface SecretRef {
  ref: string;
  scheme: SecretRefScheme;
  /** What follows `scheme://`, without any `#field`. */
  path: string;
  /** The `#field` of an aws-sm:// or vault:// reference. */
  field: string | undefined;
}

const REF_RE = /^(env|secret|aws-sm|vault|gcp-sm|azure-kv):\/\/([A-Za-z0-9][A-Za-z0-9._/:@+-]{0,255})(?:#([A-Za-z0-9._-]{1,128}))?$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** The reference, or undefined when `value` is not one (then it may be raw secret material). */
export function parseSecretRef(value: string): SecretRef | undefined {
  const m = REF_RE.exec(value);
  if (!m) return undefined;
  const scheme = m[1] as SecretRefScheme;
  const path = m[2]!;
  const field = m[3];
  if (scheme === 'env' && !ENV_NAME_RE.test(path)) return undefined;
  // Only the secret managers have fields; Vault's KV v2 data is always an object of fields.
  if (field !== undefined && scheme !== 'aws-sm' && scheme !== 'vault') return undefined;
  if (scheme === 'vault' && (field === undefined || !/^[^/]+\/[^/].*$/.test(path))) return undefined;
  return { ref: value, scheme, path, field };
}

/** secret://team/hook-key → SVC_SECRET_TEAM_HOOK_KEY */
export function deterministicEnvName(path: string): string {
  return `SVC_SECRET_${path.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** The forms, as error messages list them. */
export const SECRET_REF_FORMS = 'env://NAME, secret://path, aws-sm://name, vault://mount/path#field';

const TENANT_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The tenant whose namespace a reference lies in: undefined outside any namespace, null for a
 * reference that claims the namespace but names no tenant cleanly (granted to nobody). The
 * first segment is compared without case and `.`/`..`/empty segments are refused, so no
 * spelling of a path reaches into another tenant's namespace.
 */
export function namespaceOwner(ref: SecretRef): string | null | undefined {
  if (ref.scheme !== 'secret') return undefined;
  const segments = ref.path.split('/');
  if (segments[0]!.toLowerCase() !== 'tenants') return undefined;
  const [, owner, ...rest] = segments;
  if (segments[0] !== 'tenants' || owner === undefined || !TENANT_ID_RE.test(owner) || rest.length === 0) return null;
  if (rest.some((s) => s === '' || s === '.' || s === '..')) return null;
  return owner;
}

/** The settings that switch the network providers on (core/config.ts). */
export interface ProviderSettings {
  awsSmRegion: string | null;
  vaultAddr: string | null;
  vaultTokenRef: string | null;
}

/** Whether this build, so configured, can resolve a scheme at all. */
export function schemeAvailable(scheme: SecretRefScheme, s: ProviderSettings): boolean {
  switch (scheme) {
    case 'env':
    case 'secret':
      return true;
    case 'aws-sm':
      return s.awsSmRegion !== null;
    case 'vault':
      return s.vaultAddr !== null && s.vaultTokenRef !== null;
    case 'gcp-sm':
    case 'azure-kv':
      return false;
  }
}

/** Why a scheme is unavailable, for an operator: the setting that would enable it, if any. */
export function unavailableReason(scheme: SecretRefScheme): string {
  if (scheme === 'aws-sm') return 'aws-sm:// needs SVC_AWS_SM_REGION';
  if (scheme === 'vault') return 'vault:// needs SVC_VAULT_ADDR and SVC_VAULT_TOKEN_REF';
  return `this build has no ${scheme}:// provider`;
}
