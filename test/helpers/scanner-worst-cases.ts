/**
 * Inputs that made the policy scanners' regular expressions backtrack quadratically (one run
 * of a character class, retried from every position). The hostile-input test posts them near
 * the body limit; bench/input.ts fits each scanner's cost against their length.
 */
export const SCANNER_WORST_CASES: Record<string, (n: number) => string> = {
  'one long run of letters': (n) => 'A'.repeat(n),
  'lowercase letters (email local part, URL scheme)': (n) => 'a'.repeat(n),
  'base64url segments without a third': (n) => 'aaaaaaaaaaaaaaaa.'.repeat(Math.ceil(n / 17)).slice(0, n),
  'at signs': (n) => 'a@'.repeat(Math.ceil(n / 2)).slice(0, n),
  'schemes without credentials': (n) => 'a://b:'.repeat(Math.ceil(n / 6)).slice(0, n),
  'spaced digits': (n) => '1 '.repeat(Math.ceil(n / 2)).slice(0, n),
};
