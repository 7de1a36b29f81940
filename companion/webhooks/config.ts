/**
 * A webhook target's stored setup (interface-spec "Webhook integration") and the fixed
 * numbers of its delivery policy.
 */
import { z } from '../core/router.ts';
import { EVENT_KINDS } from './events.ts';

const unique = <T>(xs: readonly T[]) => new Set(xs).size === xs.length;

export const WebhookConfigSchema = z
  .object({
    url: z.string().min(1).max(2048).openapi({ description: 'Public HTTPS delivery URL (interface-spec Events rule 7)', example: 'https://hooks.example.com/action-gate' }),
    events: z
      .array(z.enum(EVENT_KINDS))
      .max(EVENT_KINDS.length)
      .refine(unique, 'events must not repeat')
      .openapi({ description: 'Subscribed event kinds; omit one to opt out of it' }),
    meter_thresholds: z
      .array(z.number().int().min(1).max(1e12))
      .min(1)
      .max(50)
      .refine(unique, 'meter_thresholds must not repeat')
      .optional()
      .openapi({ description: 'Cumulative meter-unit thresholds; omitted means no meter.threshold events' }),
    signature_scheme: z
      .enum(['service', 'standard-webhooks'])
      .default('service')
      .openapi({ description: 'service: X-Service-Signature t=…,v1=… (interface-spec Events 3–5). standard-webhooks: webhook-id / webhook-timestamp / webhook-signature (standardwebhooks.com)' }),
  })
  .strict()
  .openapi('WebhookConfig');

export type WebhookConfig = z.infer<typeof WebhookConfigSchema>;

/** After a rotation the previous key keeps signing beside the new one this long. */
export const SIGNING_KEY_OVERLAP_SECONDS = 24 * 3600;

/**
 * Endpoint auto-disable: a target that has failed every attempt for this long, at least this
 * many times in a row, is disabled until the tenant saves it enabled again. Long enough that a
 * receiver down for an afternoon (or a weekend) gets everything when it is back.
 */
export const AUTO_DISABLE_AFTER_SECONDS = 72 * 3600;
export const AUTO_DISABLE_MIN_FAILURES = 10;
