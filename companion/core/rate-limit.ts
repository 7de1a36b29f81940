/**
 * Token buckets for unauthenticated writes that create something (sandbox signup): one bucket
 * per client address holding `perMinute` tokens, refilled at `perMinute` a minute, and one
 * for all addresses together holding ten times that, so many addresses cannot flood it
 * either. Past either, 429 problem+json with Retry-After in seconds (RFC 6585 §4, RFC 9110
 * §10.2.3). The client address is the socket's peer, or what a trusted proxy forwards
 * (core/public-origin.ts). Buckets live in memory: a restart refills them.
 */
import type { MiddlewareHandler } from 'hono';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import { ProblemError } from './errors.ts';
import { clientAddress } from './public-origin.ts';

/** The service-wide bucket holds this many times the per-address rate. */
export const GLOBAL_FACTOR = 10;

/** Address buckets kept at most; past it the longest-idle are dropped (a full bucket is the default anyway). */
const MAX_ADDRESSES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  readonly #capacity: number;
  readonly #perMs: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(perMinute: number) {
    this.#capacity = perMinute;
    this.#perMs = perMinute / 60_000;
  }

  /** The bucket's tokens now (a bucket never seen is full). */
  #refill(key: string, now: number): Bucket {
    const b = this.#buckets.get(key);
    if (b === undefined) return { tokens: this.#capacity, at: now };
    return { tokens: Math.min(this.#capacity, b.tokens + Math.max(0, now - b.at) * this.#perMs), at: now };
  }

  /** Milliseconds until one token is there; 0 when one is there now. */
  wait(key: string, now: number): number {
    const b = this.#refill(key, now);
    return b.tokens >= 1 ? 0 : Math.ceil((1 - b.tokens) / this.#perMs);
  }

  take(key: string, now: number): void {
    const b = this.#refill(key, now);
    b.tokens -= 1;
    this.#buckets.delete(key); // re-inserted last: the map's order is least recently used first
    this.#buckets.set(key, b);
    if (this.#buckets.size > MAX_ADDRESSES) this.#buckets.delete(this.#buckets.keys().next().value!);
  }
}

/** Rate limits the requests it is mounted on; `perMinute` 0 lets everything through. */
export function signupRateLimit(config: Pick<Config, 'signupRatePerMinute' | 'trustProxy' | 'host' | 'publicBaseUrl'>, clock: Clock): MiddlewareHandler {
  const perMinute = config.signupRatePerMinute;
  if (perMinute === 0) return async (_c, next) => next();
  const perAddress = new TokenBuckets(perMinute);
  const global = new TokenBuckets(perMinute * GLOBAL_FACTOR);
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const now = clock.now().getTime();
    const address = clientAddress(config, c);
    const wait = Math.max(perAddress.wait(address, now), global.wait('*', now));
    if (wait > 0) {
      throw new ProblemError({
        status: 429,
        code: 'rate_limited',
        detail: 'too many signups; try again after Retry-After seconds',
        headers: { 'retry-after': String(Math.max(1, Math.ceil(wait / 1000))) },
      });
    }
    perAddress.take(address, now);
    global.take('*', now);
    await next();
  };
}
