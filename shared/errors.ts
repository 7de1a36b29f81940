/**
 * One error type for everything in shared/, with a closed union of codes so callers
 * (and tests) branch on `code`, never on message text. Modelled on sigstore-js'
 * VerificationError.
 */
export type SvcErrorCode =
  // encoding.ts
  | 'ENCODING_INVALID'
  // canonical-json.ts (RFC 8785)
  | 'JCS_UNSUPPORTED_VALUE'
  | 'JCS_LONE_SURROGATE'
  | 'JCS_CYCLE'
  | 'JCS_INVALID_JSON'
  | 'JCS_DUPLICATE_MEMBER'
  // ed25519.ts, keys.ts
  | 'KEY_INVALID'
  | 'SIGNATURE_INVALID_ENCODING'
  // merkle.ts (RFC 9162)
  | 'MERKLE_INVALID_ARGUMENT'
  | 'MERKLE_PROOF_INVALID'
  // webhook-signature.ts
  | 'WEBHOOK_HEADER_MALFORMED'
  | 'WEBHOOK_SIGNATURE_MISMATCH'
  | 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE'
  // attestation.ts, seal.ts, verify.ts
  | 'SEAL_MALFORMED'
  // bundle.ts
  | 'BUNDLE_MALFORMED'
  // hpke.ts (RFC 9180)
  | 'HPKE_KEY_INVALID'
  | 'HPKE_OPEN_FAILED'
  | 'REVIEW_CONTEXT_MALFORMED';

export class SvcError extends Error {
  readonly code: SvcErrorCode;
  /** Structured detail, e.g. every failing field path; never secret material. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: SvcErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'SvcError';
    this.code = code;
    this.details = details;
  }
}

export function isSvcError(e: unknown, code?: SvcErrorCode): e is SvcError {
  return e instanceof SvcError && (code === undefined || e.code === code);
}
