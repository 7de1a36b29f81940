/**
 * vault://mount/path#field references through HashiCorp Vault's KV secrets engine version 2
 * HTTP API ("Read secret version": GET /v1/{mount}/data/{path}, header X-Vault-Token, and
 * X-Vault-Namespace on Vault Enterprise); the answer is {"data":{"data":{…},"metadata":{…}}}
 * and the field is one key of the inner data. A deleted or destroyed latest version answers
 * 404 (or data null): not found.
 *
 * SVC_VAULT_ADDR is the operator's server, not a tenant's URL, so the request does not go
 * through the tenant-URL guarded client (net/outbound-http.ts), which would refuse the private
 * address a Vault usually has. The token comes from SVC_VAULT_TOKEN_REF, itself a secret
 * reference resolved at use time, so a renewed token needs no restart.
 */
import type { SecretRef } from './refs.ts';
import { ProviderFailure } from './provider.ts';
import type { SecretProvider } from './provider.ts';

export interface VaultKvOptions {
  /** e.g. https://vault.internal:8200 */
  addr: string;
  namespace: string | null;
  /** The token, or undefined when its reference does not resolve. */
  token(): Promise<string | undefined>;
}

export function vaultKv(o: VaultKvOptions): SecretProvider {
  const base = o.addr.replace(/\/+$/, '');
  return {
    async fetch(ref: SecretRef, signal: AbortSignal): Promise<string | undefined> {
      const token = await o.token();
      if (token === undefined) throw new ProviderFailure('vault token reference (SVC_VAULT_TOKEN_REF) does not resolve');
      const [mount, ...rest] = ref.path.split('/');
      const url = `${base}/v1/${encodeURIComponent(mount!)}/data/${rest.map(encodeURIComponent).join('/')}`;
      let res: Response;
      try {
        res = await fetch(url, { headers: { 'X-Vault-Token': token, ...(o.namespace ? { 'X-Vault-Namespace': o.namespace } : {}) }, signal, redirect: 'error' });
      } catch {
        throw new ProviderFailure(signal.aborted ? 'timeout' : 'vault unreachable');
      }
      if (res.status === 404) {
        await res.body?.cancel();
        return undefined;
      }
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new ProviderFailure(`vault HTTP ${res.status}`);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        throw new ProviderFailure(signal.aborted ? 'timeout' : 'vault answer is not JSON');
      }
      const data = (body as { data?: { data?: unknown } } | null)?.data?.data;
      if (typeof data !== 'object' || data === null) return undefined;
      const v = (data as Record<string, unknown>)[ref.field!];
      return typeof v === 'string' ? v : undefined;
    },
  };
}
