/**
 * What a network secret provider does for the resolver (core/secret-refs.ts): fetch one
 * reference's value within the signal's time, answer undefined when the secret or field does
 * not exist, and throw ProviderFailure when the provider could not be asked or refused.
 */
import type { SecretRef } from './refs.ts';

export interface SecretProvider {
  fetch(ref: SecretRef, signal: AbortSignal): Promise<string | undefined>;
  close?(): void;
}

/** The provider failed; `detail` names the provider's error code, never a value. */
export class ProviderFailure extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'ProviderFailure';
  }
}
