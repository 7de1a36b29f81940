/**
 * aws-sm:// references through AWS Secrets Manager's GetSecretValue (AWS JSON 1.1 protocol,
 * X-Amz-Target secretsmanager.GetSecretValue), with the official SDK: it signs with SigV4 and
 * finds credentials through its usual chain (environment, shared files, container or
 * instance role), so this module never handles an AWS credential itself.
 *
 * The endpoint is the operator's (SVC_AWS_SM_REGION, SVC_AWS_SM_ENDPOINT), never a tenant's
 * URL, so calls go straight through the SDK and not through the tenant-URL guarded client
 * (net/outbound-http.ts): that client exists to keep tenant-chosen addresses off private
 * networks, and a VPC endpoint the operator names is exactly such an address.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SecretRef } from './refs.ts';
import { ProviderFailure } from './provider.ts';
import type { SecretProvider } from './provider.ts';

export interface AwsSecretsManagerOptions {
  region: string;
  /** A VPC endpoint or a loopback stand-in; null: the region's public endpoint. */
  endpoint: string | null;
}

export function awsSecretsManager(o: AwsSecretsManagerOptions): SecretProvider {
  // The SDK is loaded at the first aws-sm:// resolution, so a service that uses none starts
  // without it.
  let client: Promise<{ client: SecretsManagerClient; GetSecretValueCommand: typeof import('@aws-sdk/client-secrets-manager').GetSecretValueCommand }> | undefined;
  const sdk = () =>
    (client ??= import('@aws-sdk/client-secrets-manager').then((m) => ({
      // One attempt per resolution: the resolver's timeout bounds it, and the worker that
      // asked retries on its own schedule.
      client: new m.SecretsManagerClient({ region: o.region, maxAttempts: 1, ...(o.endpoint ? { endpoint: o.endpoint } : {}) }),
      GetSecretValueCommand: m.GetSecretValueCommand,
    })));
  return {
    async fetch(ref: SecretRef, signal: AbortSignal): Promise<string | undefined> {
      const { client, GetSecretValueCommand } = await sdk();
      let answer;
      try {
        answer = await client.send(new GetSecretValueCommand({ SecretId: ref.path }), { abortSignal: signal });
      } catch (err) {
        const name = (err as { name?: string }).name;
        if (name === 'ResourceNotFoundException') return undefined;
        throw new ProviderFailure(signal.aborted ? 'timeout' : `aws-sm ${name ?? 'error'}`);
      }
      // A SecretBinary secret has no SecretString: not a value this service can use as a key.
      const text = answer.SecretString;
      if (text === undefined) return undefined;
      return ref.field === undefined ? text : jsonField(text, ref.field);
    },
    close: () => void client?.then((c) => c.client.destroy()),
  };
}

/** The #field of a JSON SecretString (the console's key/value secrets are stored this way). */
function jsonField(text: string, field: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    const v = (parsed as Record<string, unknown>)[field];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}
