/**
 * Error answers of the OAuth endpoints (RFC 6749 §5.2, RFC 8628 §3.5): 400 with an
 * application/json body of `error` and `error_description`, which OAuth clients parse, instead of
 * the problem+json every other route answers. The description is fixed text per error, never
 * caller input.
 */
import { z } from '../core/router.ts';

export const OAUTH_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'invalid_scope',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERRORS)[number];

export const OAuthError = z
  .object({
    error: z.enum(OAUTH_ERRORS),
    error_description: z.string(),
  })
  .openapi('OAuthError', { description: 'RFC 6749 §5.2 error response (RFC 8628 §3.5 adds authorization_pending, slow_down, access_denied, expired_token)' });

/** A 400 application/json answer for the OpenAPI document. */
export function oauthErrorContent(description: string) {
  return { description, content: { 'application/json': { schema: OAuthError } } };
}

export function oauthError(error: OAuthErrorCode, description: string): Response {
  // RFC 6749 §5.1: answers of the token endpoint are never cached.
  return new Response(JSON.stringify({ error, error_description: description }), {
    status: 400,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' },
  });
}
