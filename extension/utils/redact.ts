/**
 * Client-side redaction of obvious identifiers before text leaves the tab (issue 5, item 2:
 * "emails, phone numbers, card and ID numbers, keys"). The gate receives only this redacted
 * text; the raw prompt stays in the page's composer. This is a safety net for the obvious
 * cases, not a data-loss-prevention engine: it errs towards redacting (a long hex string may be
 * a hash, not a key; it is redacted anyway).
 *
 * Rules run in order, so a key that contains digits is gone before the card and phone rules
 * look at it. Each placeholder names what was removed, never any part of it.
 */

export type RedactionKind = 'PRIVATE_KEY' | 'TOKEN' | 'KEY' | 'SECRET' | 'EMAIL' | 'IBAN' | 'CARD' | 'SSN' | 'ID' | 'PHONE';

export interface Redaction {
  text: string;
  /** How many of each kind were removed (safe to log: counts only). */
  counts: Partial<Record<RedactionKind, number>>;
}

interface Rule {
  kind: RedactionKind;
  pattern: RegExp;
  /** Extra check on a match (checksums), so ordinary numbers are not redacted. */
  accept?: (match: string) => boolean;
  /** Replacement for the match; defaults to `[KIND]`. */
  replace?: (match: string, ...groups: string[]) => string;
}

const RULES: readonly Rule[] = [
  { kind: 'PRIVATE_KEY', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g },
  // RFC 7519 JWS compact form: three base64url parts, the first a JSON header ("eyJ" = '{"').
  { kind: 'TOKEN', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
  {
    kind: 'KEY',
    pattern:
      /\b(?:svc_(?:test|live)_|sk-(?:proj-|ant-)?|sk_(?:live|test)_|rk_live_|pk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abprs]-|whsec_|AIza|AKIA|ASIA)[A-Za-z0-9_-]{8,}/g,
  },
  {
    kind: 'SECRET',
    pattern: /\b(api[_-]?key|secret|token|password|passwd|pwd)(\s*[:=]\s*)("[^"\s]+"|'[^'\s]+'|[^\s,;]+)/gi,
    replace: (_m, label: string, sep: string) => `${label}${sep}[SECRET]`,
  },
  { kind: 'EMAIL', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  { kind: 'IBAN', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g, accept: ibanChecksumOk },
  { kind: 'CARD', pattern: /\b\d(?:[ -]?\d){12,18}\b/g, accept: (m) => luhnOk(m.replace(/\D/g, '')) },
  { kind: 'SSN', pattern: /\b\d{3}-\d{2}-\d{4}\b/g },
  // UK National Insurance number (HMRC NIM39110 format).
  { kind: 'ID', pattern: /\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g },
  {
    kind: 'PHONE',
    pattern: /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?|\d{2,4}[ .-])\d{2,4}[ .-]?\d{3,4}(?![\w])/g,
    accept: (m) => {
      const digits = m.replace(/\D/g, '').length;
      return digits >= 9 && digits <= 15;
    },
  },
  // Long hex or base64-like runs with both letters and digits: keys, tokens, secrets.
  { kind: 'KEY', pattern: /\b[A-Fa-f0-9]{32,}\b/g },
  { kind: 'KEY', pattern: /(?<![\w/+-])[A-Za-z0-9+/_-]{40,}={0,2}/g, accept: (m) => /\d/.test(m) && /[A-Za-z]/.test(m) },
];

export function redact(input: string): Redaction {
  const counts: Partial<Record<RedactionKind, number>> = {};
  let text = input;
  for (const rule of RULES) {
    text = text.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
      if (rule.accept && !rule.accept(match)) return match;
      counts[rule.kind] = (counts[rule.kind] ?? 0) + 1;
      const groups = rest.filter((g): g is string => typeof g === 'string');
      return rule.replace ? rule.replace(match, ...groups) : `[${rule.kind}]`;
    });
  }
  return { text, counts };
}

/** ISO/IEC 7812-1 Annex B (the Luhn check digit). */
export function luhnOk(digits: string): boolean {
  if (!/^\d{13,19}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616-1 §6: move the first four characters to the end, letters to numbers, mod 97 = 1. */
export function ibanChecksumOk(iban: string): boolean {
  const s = iban.replace(/ /g, '');
  if (s.length < 15 || s.length > 34) return false;
  const rearranged = s.slice(4) + s.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = /[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}
