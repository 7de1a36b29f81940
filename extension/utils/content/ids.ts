/**
 * Attempt ids (the gate's idempotency_key). crypto.randomUUID exists only in secure contexts,
 * and a content script shares its page's; getRandomValues exists everywhere.
 */
export function newAttemptId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
