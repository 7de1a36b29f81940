/**
 * The webhook channel of PUT /tenant/integrations/webhook/{target} (interface-spec "Webhook
 * integration"): the URL must pass the outbound address policy; a target without a secret_ref
 * signs with a minted whsec_ secret, shown once with its key derivation, of which only the
 * derived key is kept (Events rule 5). rotate_signing_secret mints a new one; the previous key
 * keeps signing beside it for SIGNING_KEY_OVERLAP_SECONDS, so receivers can switch without a
 * gap (both signatures are sent meanwhile).
 */
import { WEBHOOK_KEY_DERIVATION_PREFIX, deriveWebhookKey, newSigningSecret } from '../../shared/webhook-signature.ts';
import { standardSecretForKey } from '../../shared/webhook-standard.ts';
import type { FieldError } from '../core/errors.ts';
import { SealedSecretError } from '../core/secrets/envelope.ts';
import type { IntegrationChannel, Readiness } from '../integrations/channel.ts';
import { checkTargetUrl } from '../net/address-policy.ts';
import { AUTO_DISABLE_AFTER_SECONDS, AUTO_DISABLE_MIN_FAILURES, SIGNING_KEY_OVERLAP_SECONDS, WebhookConfigSchema } from './config.ts';
import type { WebhookConfig } from './config.ts';
import { signingKeys } from './delivery.ts';
import type { WebhookStore } from './store.ts';

/** How the HMAC key is derived from the secret shown once (interface-spec Events rule 5). */
export const SIGNING_KEY_DERIVATION = {
  algorithm: 'SHA-256',
  input: `UTF-8 of "${WEBHOOK_KEY_DERIVATION_PREFIX}" followed by signing_secret`,
  key: 'lowercase hex of that digest (64 characters); HMAC-SHA256 uses the UTF-8 bytes of this hex string as its key',
  signature: 'X-Service-Signature: t=<X-Service-Timestamp>,v1=<hex HMAC-SHA256(key, "<timestamp>.<X-Service-Id>.<raw body>")>',
} as const;

/** Whether the target has a current minted key, and whether it opens (core/secrets/envelope.ts). */
async function currentKey(webhooks: WebhookStore, tenantId: string, target: string, at: string): Promise<'none' | 'readable' | 'unreadable'> {
  try {
    return (await webhooks.activeKeys(tenantId, target, at)).some((k) => k.retiresAt === null) ? 'readable' : 'none';
  } catch (err) {
    if (err instanceof SealedSecretError) return 'unreadable';
    throw err;
  }
}

export const webhookChannel: IntegrationChannel<WebhookConfig> = {
  name: 'webhook',
  config: WebhookConfigSchema,

  check({ deps, existing }, input): FieldError[] {
    const errors: FieldError[] = [];
    const url = checkTargetUrl(input.config.url, { allowLoopback: deps.config.webhookAllowLoopback });
    if (!url.ok) errors.push({ in: 'body', path: '/config/url', code: url.code, message: url.reason });
    if (input.rotate_signing_secret && input.secret_ref) {
      errors.push({ in: 'body', path: '/rotate_signing_secret', code: 'rotation_needs_minted_secret', message: 'a target signing with a secret_ref is rotated by changing the referenced secret, not here' });
    }
    if (input.rotate_signing_secret && existing === undefined) {
      errors.push({ in: 'body', path: '/rotate_signing_secret', code: 'nothing_to_rotate', message: 'this target does not exist yet; its first save mints its secret' });
    }
    return errors;
  },

  async saved({ tenantId, target, now }, input, tx) {
    if (input.secret_ref) return { signing: { key_source: 'secret_ref' } };
    const at = now.toISOString();
    const current = await currentKey(tx.webhooks, tenantId, target, at);
    if (current !== 'none' && !input.rotate_signing_secret) return { signing: { key_source: 'minted' } };

    const secret = newSigningSecret();
    const key = deriveWebhookKey(secret);
    let previousRetiresAt: string | undefined;
    if (current === 'readable') {
      previousRetiresAt = new Date(now.getTime() + SIGNING_KEY_OVERLAP_SECONDS * 1000).toISOString();
      await tx.webhooks.retireCurrentKey(tenantId, target, previousRetiresAt);
    } else if (current === 'unreadable') {
      // A key that no longer opens cannot sign during an overlap: it retires now, and the
      // rotation is how a tenant recovers from it.
      await tx.webhooks.retireCurrentKey(tenantId, target, at);
    }
    await tx.webhooks.addSigningKey(tenantId, target, key, at);
    return {
      signing: { key_source: 'minted', ...(previousRetiresAt ? { previous_key_retires_at: previousRetiresAt } : {}) },
      // interface-spec "Webhook integration": shown exactly once; only the derived key is stored.
      signing_secret: secret,
      signing_key_derivation: SIGNING_KEY_DERIVATION,
      ...(input.config.signature_scheme === 'standard-webhooks' ? { standard_webhooks_secret: standardSecretForKey(key) } : {}),
    };
  },

  async readiness(deps, row): Promise<Readiness> {
    const counts = await deps.store.webhooks.countByStatus(row.tenantId, row.target);
    const deliveries = { pending: counts.pending, failed: counts.failed, dead: counts.dead, delivered: counts.delivered };
    if (row.disabledAt) {
      return { state: 'auto_disabled', detail: `disabled by the service at ${row.disabledAt}: ${row.disabledReason ?? 'sustained failure'}; save the target enabled to resume`, disabled_at: row.disabledAt, deliveries };
    }
    if (!row.enabled) return { state: 'disabled', detail: 'the tenant disabled this target; nothing is enqueued or sent', deliveries };
    const keys = await signingKeys({ webhooks: deps.store.webhooks, secrets: deps.secrets }, row.tenantId, row.target, row.secretRef, deps.clock.now());
    if (!keys.ok) {
      const provider = row.secretRef?.split('://')[0] ?? 'minted';
      return { state: row.secretRef ? 'waiting_on_secret' : 'incomplete', detail: keys.error, secret: { provider, resolvable: false }, deliveries };
    }
    return {
      state: 'ready',
      detail: 'deliveries are sent as events occur',
      failing: row.consecutiveFailures > 0 ? { consecutive_failures: row.consecutiveFailures, since: row.failingSince, auto_disable_after_seconds: AUTO_DISABLE_AFTER_SECONDS, auto_disable_min_failures: AUTO_DISABLE_MIN_FAILURES } : null,
      deliveries,
    };
  },
};
