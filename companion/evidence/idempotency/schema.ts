/**
 * The `idempotency_key` member every sealing request may carry (interface-spec Gate request:
 * the same key returns the original result, metered once), one schema for all of them.
 */
import { z } from '../../core/router.ts';

export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const IdempotencyKey = z
  .string()
  .max(255, { error: 'expected 1 to 255 visible ASCII characters', abort: true })
  .regex(IDEMPOTENCY_KEY_PATTERN, { error: 'expected 1 to 255 visible ASCII characters' })
  .openapi({ description: 'A retry with the same key returns the original result and is metered once' });
