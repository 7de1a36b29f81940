/**
 * Request and response schemas of the review-context endpoints (./routes.ts, ./key-routes.ts).
 * Binary values travel as unpadded base64url (RFC 4648 §5), as in JOSE: a public key and an
 * HPKE `enc` are 32 bytes (43 characters), a ciphertext `ct` at most CIPHERTEXT_MAX_BYTES.
 */
import { REVIEW_CONTEXT_INFO_TEXT, REVIEW_CONTEXT_SUITE } from '../../shared/hpke.ts';
import { z } from '../core/router.ts';

/** One ciphertext: the gate request body is bounded far below this (gate bounds, 32,000 characters of text). */
export const CIPHERTEXT_MAX_BYTES = 64 * 1024;
/** All ciphertexts of one paused action together; kept under the default 1 MiB body limit once base64url-encoded. */
export const CONTEXT_TOTAL_MAX_BYTES = 512 * 1024;
/** Recipients one action's context is sealed to at most (and ciphertexts one POST carries). */
export const RECIPIENTS_MAX = 64;
/** Active device keys one person may hold. */
export const KEYS_PER_PERSON_MAX = 10;
export const LABEL_MAX = 64;

const base64url = (bytes: number) => Math.ceil((bytes * 4) / 3);
const B64URL = /^[A-Za-z0-9_-]*$/;

export const PublicKey32 = z
  .string()
  .length(43, { error: 'expected a raw 32-byte X25519 public key as 43 characters of unpadded base64url' })
  .regex(B64URL, { error: 'expected unpadded base64url (RFC 4648 §5)' })
  .openapi({ description: 'Raw X25519 public key (RFC 7748 §5), 32 bytes, unpadded base64url', example: 'ZnJvbS1hLXJldmlld2VyLWRldmljZS0zMi1ieXRlcyE' });

const KeyId = z.string().min(1).max(64).openapi({ example: 'rvk_01JD3Q8Z5V7N4M2K6H8G0F1E2D' });

export const ReviewKeyRequest = z
  .strictObject({
    public_key: PublicKey32,
    label: z.string().min(1).max(LABEL_MAX).openapi({ description: 'Which device this is, as its owner will recognise it', example: 'Work laptop, Chrome' }),
  })
  .openapi('ReviewKeyRequest');

export const ReviewKey = z
  .object({
    id: KeyId,
    person_id: z.string(),
    public_key: z.string().openapi({ description: 'Raw X25519 public key, unpadded base64url' }),
    label: z.string(),
    status: z.enum(['active', 'revoked']),
    created_at: z.string(),
    last_used_at: z.string().nullable().openapi({ description: 'When review context sealed to this key was last fetched' }),
    revoked_at: z.string().nullable(),
  })
  .openapi('ReviewKey');

export const ReviewKeyResponse = z.object({ review_key: ReviewKey }).openapi('ReviewKeyResponse');
export const ReviewKeyList = z.object({ review_keys: z.array(ReviewKey).openapi({ description: 'Oldest first, revoked ones included' }) }).openapi('ReviewKeyList');
export const ReviewKeyParam = z.object({ key_id: KeyId.openapi({ param: { name: 'key_id', in: 'path' } }) });

export const ActionKeyParam = z.object({
  action_key: z.string().min(1).max(200).openapi({ param: { name: 'action_key', in: 'path' }, example: 'law:proposed-action:01JD3Q8Z5V7N4M2K6H8G0F1E2D' }),
});

export const CONTEXT_STATUSES = ['available', 'not_shared', 'expired'] as const;
export const ContextStatus = z
  .enum(CONTEXT_STATUSES)
  .openapi({ description: 'available: ciphertexts are held for this action; not_shared: none; expired: the review ended, and with it anything shared' });

const Suite = z
  .object({ kem_id: z.literal(REVIEW_CONTEXT_SUITE.kem_id), kdf_id: z.literal(REVIEW_CONTEXT_SUITE.kdf_id), aead_id: z.literal(REVIEW_CONTEXT_SUITE.aead_id), mode: z.literal(0), info: z.literal(REVIEW_CONTEXT_INFO_TEXT) })
  .openapi('ReviewContextSuite', {
    description:
      'RFC 9180: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305, base mode; info as UTF-8; aad = JCS bytes of {action_key, payload_hash} (shared/hpke.ts)',
  });

export const SUITE = { ...REVIEW_CONTEXT_SUITE, mode: 0, info: REVIEW_CONTEXT_INFO_TEXT } as const;

export const Recipients = z
  .object({
    action_key: z.string(),
    payload_hash: z.string().openapi({ description: "The paused action's sealed payload_hash: bound into each ciphertext as associated data" }),
    review_context: z.enum(['encrypted', 'off']).openapi({ description: 'The tenant policy for this action type; off: post nothing' }),
    status: ContextStatus,
    suite: Suite,
    limits: z.object({ ciphertext_max_bytes: z.number().int(), total_max_bytes: z.number().int(), recipients_max: z.number().int() }),
    recipients: z
      .array(z.object({ key_id: z.string(), person_id: z.string(), public_key: z.string().openapi({ description: 'Raw X25519 public key, unpadded base64url' }) }))
      .openapi({ description: 'Every active device key of every active person who may decide this action; empty when review_context is off' }),
  })
  .openapi('ReviewContextRecipients');

export const ContextUpload = z
  .strictObject({
    ciphertexts: z
      .array(
        z.strictObject({
          key_id: KeyId,
          enc: z.string().length(43).regex(B64URL).openapi({ description: 'RFC 9180 §6.1 enc: the 32-byte encapsulated key, unpadded base64url' }),
          ct: z
            .string()
            .min(base64url(17))
            // The schema's bound is the whole item's; the route answers 413 past the per-ciphertext limit.
            .max(base64url(CONTEXT_TOTAL_MAX_BYTES))
            .regex(B64URL)
            .openapi({ description: `RFC 9180 §6.1 ct, unpadded base64url; at most ${CIPHERTEXT_MAX_BYTES} bytes` }),
        }),
      )
      .min(1)
      .max(RECIPIENTS_MAX),
  })
  .openapi('ReviewContextUpload');

export const ContextStored = z
  .object({ action_key: z.string(), status: ContextStatus, stored: z.number().int().openapi({ description: 'Ciphertexts now held for this action' }) })
  .openapi('ReviewContextStored');

export const ContextQuery = z.object({
  key_id: KeyId.openapi({ param: { name: 'key_id', in: 'query' }, description: "The caller's own device key the context was sealed to" }),
});

export const ContextCiphertext = z
  .object({
    action_key: z.string(),
    payload_hash: z.string().openapi({ description: 'The sealed payload_hash; recompute it from the plaintext (shared/hpke.ts checkReviewContext)' }),
    record_href: z.string(),
    key_id: z.string(),
    suite: Suite,
    enc: z.string(),
    ct: z.string(),
  })
  .openapi('ReviewContextCiphertext');

export const ContextWithdrawn = z.object({ action_key: z.string(), erased: z.number().int(), status: ContextStatus }).openapi('ReviewContextWithdrawn');
