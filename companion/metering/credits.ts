/**
 * Credits for a sealed production action (interface-spec Limits and "What the service does" 9):
 * the pack's gate rate × the request's estimated 1,000-token blocks, rounded up; 1 cent per
 * credit; capped at 25 US dollars (2,500 credits) per action.
 *
 * Token estimate: ceil(bytes / 4) over the JCS bytes of the payload (the request body without
 * idempotency_key). Four bytes per token is the usual rule of thumb for English text under
 * common BPE tokenizers; it needs no tokenizer and no raw text kept, and it is stated in
 * GET /v1/packs so callers can predict their bill. Every action costs at least one block.
 */

export const BYTES_PER_TOKEN = 4;
export const TOKENS_PER_BLOCK = 1_000;
export const CENTS_PER_CREDIT = 1;
export const MAX_CREDITS_PER_ACTION = 2_500;
/** Sandbox tenants include this many sealed actions (interface-spec Limits). */
export const SANDBOX_ACTION_ALLOWANCE = 100;
/** GET /tenant/usage warns from this share of the cap on. */
export const USAGE_WARNING_RATIO = 0.8;

export interface CreditEstimate {
  estimated_tokens: number;
  blocks: number;
  rate: number;
  credits: number;
}

export function estimateCredits(payloadBytes: number, rate: number): CreditEstimate {
  if (!Number.isInteger(payloadBytes) || payloadBytes < 0) throw new RangeError(`expected byte count >= 0, got ${payloadBytes}`);
  if (!Number.isInteger(rate) || rate < 0) throw new RangeError(`expected integer rate >= 0, got ${rate}`);
  const estimatedTokens = Math.ceil(payloadBytes / BYTES_PER_TOKEN);
  const blocks = Math.max(1, Math.ceil(estimatedTokens / TOKENS_PER_BLOCK));
  return { estimated_tokens: estimatedTokens, blocks, rate, credits: Math.min(MAX_CREDITS_PER_ACTION, rate * blocks) };
}
