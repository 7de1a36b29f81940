/**
 * Sortable unique identifiers: ULID (github.com/ulid/spec): 48-bit Unix milliseconds then 80
 * random bits, 26 characters of Crockford base32. Ids made by one factory sort in creation
 * order, even within one millisecond (the spec's monotonic mode), so tables keyed by them
 * insert at the right edge of their B-tree (notes/performance.md: sequential keys are cheap,
 * random ones are not).
 */
import { randomFillSync } from 'node:crypto';
import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const MAX_TIME = 2 ** 48 - 1;
const RANDOM_BYTES = 10;
/**
 * Random bytes are drawn from the CSPRNG for this many ids at once and handed out in turn, each
 * byte once: one randomFillSync call per 64 ids instead of one per id.
 */
const POOLED_IDS = 64;

export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export interface IdFactory {
  /** A bare ULID. */
  ulid(): string;
  /** `<prefix>_<ULID>`, e.g. `ten_01J...` for tenants. */
  next(prefix: string): string;
}

export function createIdFactory(
  clock: Clock = systemClock,
  fillRandom: (bytes: Uint8Array) => void = (b) => void randomFillSync(b),
): IdFactory {
  let lastTime = -1;
  const random = new Uint8Array(RANDOM_BYTES);
  const pool = new Uint8Array(RANDOM_BYTES * POOLED_IDS);
  let pooled = 0;

  /** The next unused 80 random bits into `random`. */
  function draw(): void {
    if (pooled === 0) {
      fillRandom(pool);
      pooled = pool.length;
    }
    random.set(pool.subarray(pool.length - pooled, pool.length - pooled + RANDOM_BYTES));
    pooled -= RANDOM_BYTES;
  }

  function ulid(): string {
    let time = clock.now().getTime();
    if (!Number.isInteger(time) || time < 0 || time > MAX_TIME) {
      throw new RangeError(`ULID time must be 0..2^48-1 ms, got ${time}`);
    }
    if (time <= lastTime) {
      // ULID monotonic mode: same (or an earlier, if the clock stepped back) millisecond →
      // increment the previous randomness so the id still sorts after the last one.
      time = lastTime;
      if (!increment(random)) time += 1; // 2^80 ids in one ms: carry into the time part
    } else {
      draw();
    }
    lastTime = time;
    return encodeTime(time) + encodeRandom(random);
  }

  return {
    ulid,
    next(prefix: string): string {
      return `${prefix}_${ulid()}`;
    },
  };
}

/** Adds one to a big-endian unsigned integer in place; false when it wrapped to zero. */
function increment(bytes: Uint8Array): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] !== 0xff) {
      bytes[i]! += 1;
      return true;
    }
    bytes[i] = 0;
  }
  return false;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** 80 bits → 16 base32 characters, most significant first. */
function encodeRandom(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(acc >> bits) & 31]!;
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** The millisecond timestamp a ULID carries. */
export function ulidTime(id: string): number {
  const body = id.slice(id.lastIndexOf('_') + 1);
  if (!ULID_PATTERN.test(body)) throw new TypeError(`expected a ULID, got ${JSON.stringify(id)}`);
  let ms = 0;
  for (const c of body.slice(0, 10)) ms = ms * 32 + CROCKFORD.indexOf(c);
  return ms;
}
