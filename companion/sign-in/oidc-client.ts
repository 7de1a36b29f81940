/**
 * One tenant's identity provider as an OpenID Connect relying party (openid-client): discovery
 * (OpenID Connect Discovery 1.0 §4), the authorization request with PKCE S256 (RFC 7636), state
 * and nonce (OpenID Connect Core §3.1.2.1), and the code exchange with the ID token's checks
 * (Core §3.1.3.7: issuer, audience, signature, expiry, nonce). Every request goes through the
 * guarded client (./oidc-fetch.ts).
 */
import * as oidc from 'openid-client';
import type { SecretResolver } from '../core/secret-refs.ts';
import { createGuardedFetch, IdentityProviderUnreachable } from './oidc-fetch.ts';
import type { GuardedFetch } from './oidc-fetch.ts';
import type { IdentityProviderRecord } from './store.ts';
import type { AddressRules } from '../net/address-policy.ts';

/** The claims sign-in reads from a verified ID token. */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
}

export class IdentityProviderFailure extends Error {}
/** The answer at the callback did not verify: state, nonce, PKCE, issuer or the ID token. */
export class AuthorizationResponseRefused extends Error {}

/** How long a discovered configuration is reused before the provider is asked again. */
const CONFIGURATION_TTL_MS = 5 * 60_000;

export interface OidcClients {
  authorizationUrl(provider: IdentityProviderRecord, request: { redirectUri: string; state: string; nonce: string; codeChallenge: string; loginHint?: string }): Promise<URL>;
  exchange(provider: IdentityProviderRecord, callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<VerifiedIdentity>;
  close(): Promise<void>;
}

export function createOidcClients(options: { rules: AddressRules; secrets: SecretResolver; now: () => number }): OidcClients {
  const fetch: GuardedFetch & { close(): Promise<void> } = createGuardedFetch(options.rules);
  const cache = new Map<string, { until: number; config: Promise<oidc.Configuration> }>();

  async function configuration(provider: IdentityProviderRecord): Promise<oidc.Configuration> {
    // updated_at changes with every PUT, so a changed provider is discovered afresh.
    const key = `${provider.tenantId}\n${provider.updatedAt}`;
    const hit = cache.get(key);
    if (hit && hit.until > options.now()) return hit.config;
    const config = discover(provider);
    if (cache.size > 1000) cache.clear();
    cache.set(key, { until: options.now() + CONFIGURATION_TTL_MS, config });
    config.catch(() => cache.delete(key));
    return config;
  }

  async function discover(provider: IdentityProviderRecord): Promise<oidc.Configuration> {
    let auth = oidc.None();
    if (provider.clientSecretRef !== null) {
      const secret = await options.secrets.resolve(provider.tenantId, provider.clientSecretRef);
      if (!secret.ok) throw new IdentityProviderFailure(`the client secret reference could not be resolved (${secret.error})`);
      auth = oidc.ClientSecretBasic(secret.value);
    }
    // http is reached only when the guarded client allows it: a loopback literal under
    // SVC_WEBHOOK_ALLOW_LOOPBACK (local development and tests).
    const insecure = new URL(provider.issuer).protocol === 'http:';
    try {
      const config = await oidc.discovery(new URL(provider.issuer), provider.clientId, undefined, auth, {
        [oidc.customFetch]: fetch as oidc.CustomFetch,
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      });
      config[oidc.customFetch] = fetch as oidc.CustomFetch;
      return config;
    } catch (err) {
      if (err instanceof IdentityProviderUnreachable) throw new IdentityProviderFailure(err.message, { cause: err });
      throw new IdentityProviderFailure('the identity provider\'s discovery document could not be read', { cause: err });
    }
  }

  return {
    async authorizationUrl(provider, r) {
      const config = await configuration(provider);
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: r.redirectUri,
        scope: 'openid email profile',
        response_type: 'code',
        code_challenge: r.codeChallenge,
        code_challenge_method: 'S256',
        state: r.state,
        nonce: r.nonce,
        ...(r.loginHint ? { login_hint: r.loginHint } : {}),
      });
    },
    async exchange(provider, callbackUrl, checks) {
      const config = await configuration(provider);
      let tokens;
      try {
        tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
      } catch (err) {
        if (err instanceof IdentityProviderUnreachable) throw new IdentityProviderFailure(err.message, { cause: err });
        throw new AuthorizationResponseRefused(err instanceof Error ? err.message : 'the authorization response did not verify', { cause: err });
      }
      const claims = tokens.claims();
      if (!claims) throw new AuthorizationResponseRefused('the token response carried no ID token');
      let email: unknown = claims.email;
      let verified: unknown = claims.email_verified;
      if (typeof email !== 'string') {
        // OpenID Connect Core §5.4: with the code flow, the scope's claims may be served only by
        // the UserInfo endpoint, whose sub must be the ID token's (§5.3.2).
        try {
          const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
          email = info.email;
          verified = info.email_verified;
        } catch (err) {
          if (err instanceof IdentityProviderUnreachable) throw new IdentityProviderFailure(err.message, { cause: err });
          throw new AuthorizationResponseRefused('the UserInfo answer did not verify', { cause: err });
        }
      }
      return { issuer: claims.iss, subject: claims.sub, email: typeof email === 'string' ? email : undefined, emailVerified: verified === true };
    },
    close: () => fetch.close(),
  };
}
