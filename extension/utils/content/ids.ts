/**
 * Attempt ids (the gate's idempotency_key). crypto.randomUUID exists only in secure contexts,
 * and a content script shares its page's; getRandomValues exists everywhere.
 */
/**
 * The gate request's client_nonce: 16 random bytes as unpadded base64url (22 characters). It is
 * hashed into payload_hash, so the sealed hash cannot be confirmed by hashing a guessed request;
 * one per attempt, so a retry under the same idempotency_key sends the same payload.
 */
export function newClientNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function newAttemptId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
