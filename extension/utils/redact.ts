/**
 * Client-side redaction of obvious identifiers before text leaves the tab
 * (emails, phone numbers, card and ID numbers, keys). The gate receives only this redacted
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
  /** Replacement for the match; defaults to `[KIND]`. Returning the match unchanged counts nothing. */
  replace?: (match: string, ...groups: string[]) => string;
}

const RULES: readonly Rule[] = [
  // RFC 7468 §2 textual encodings: PKCS #8, PKCS #1, SEC 1, OpenSSH and OpenPGP (RFC 4880 §6.2
  // "PRIVATE KEY BLOCK") private keys; a block cut off before its END line goes to the end.
  {
    kind: 'PRIVATE_KEY',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  // RFC 7519 JWS compact form: three base64url parts, the first a JSON header ("eyJ" = '{"').
  { kind: 'TOKEN', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g },
  {
    kind: 'KEY',
    pattern:
      /\b(?:svc_(?:test|live)_|sk-(?:proj-|ant-)?|sk_(?:live|test)_|rk_live_|pk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abprs]-|whsec_|AIza|AKIA|ASIA)[A-Za-z0-9_-]{8,}/g,
  },
  // RFC 3986 §3.2.1 userinfo "user:password@" in a connection string (postgres://, mongodb+srv://,
  // amqp://, redis://, ...): the password goes, the scheme, user and host stay readable.
  {
    kind: 'SECRET',
    pattern: /\b([a-z][a-z0-9+.-]{1,30}:\/\/[^\s:@/]*):([^\s@/]+)@/gi,
    replace: (_m, prefix: string) => `${prefix}:[SECRET]@`,
  },
  {
    kind: 'SECRET',
    pattern: /\b(api[_-]?key|secret|token|password|passwd|pwd)(\s*[:=]\s*)("[^"\s]+"|'[^'\s]+'|[^\s,;]+)/gi,
    replace: (_m, label: string, sep: string) => `${label}${sep}[SECRET]`,
  },
  { kind: 'EMAIL', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  // ISO 13616 in print (groups of four, spaces or none) and however else it was pasted: the
  // longest run of IBAN characters whose mod-97 check holds.
  { kind: 'IBAN', pattern: /\b[A-Z]{2}\d{2}(?:[ \u00a0]?[A-Z0-9]){11,30}\b/g, replace: redactIbanPrefix },
  { kind: 'CARD', pattern: /\b\d(?:[ -]?\d){12,18}\b/g, accept: (m) => luhnOk(m.replace(/\D/g, '')) },
  { kind: 'SSN', pattern: /\b\d{3}-\d{2}-\d{4}\b/g },
  // National identity numbers, each with its own check so ordinary numbers are left alone.
  // UK National Insurance number (HMRC NIM39110 format).
  { kind: 'ID', pattern: /\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g },
  // UK NHS number as written, 3-3-4 with spaces, and its modulus 11 check digit (NHS Data
  // Dictionary); ten bare digits are left to the phone rules.
  { kind: 'ID', pattern: /\b\d{3} \d{3} \d{4}\b/g, accept: (m) => nhsOk(m.replace(/\D/g, '')) },
  // Spain: DNI (eight digits and a check letter) and NIE (X, Y or Z, seven digits, check letter).
  { kind: 'ID', pattern: /\b[XYZ]?-?\d{7,8}-?[A-Z]\b/g, accept: spanishIdOk },
  // Italy: codice fiscale (DM 23/12/1976): surname, name, birth date and place, check letter.
  { kind: 'ID', pattern: /\b[A-Z]{6}\d{2}[ABCDEHLMPRST]\d{2}[A-Z]\d{3}[A-Z]\b/g },
  // France: NIR (sécurité sociale), 13 characters and a 2-digit key = 97 - (number mod 97).
  { kind: 'ID', pattern: /\b[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}\b/g, accept: nirOk },
  // Belgium: national register number YY.MM.DD-SSS.CC, check = 97 - (number mod 97).
  { kind: 'ID', pattern: /\b\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}\b/g, accept: belgianOk },
  // Poland: PESEL, eleven digits, weights 1-3-7-9 (Dz.U. 2022 poz. 1191).
  { kind: 'ID', pattern: /\b\d{11}\b/g, accept: peselOk },
  {
    kind: 'PHONE',
    pattern: /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?|\d{2,4}[ .-])\d{2,4}[ .-]?\d{3,4}(?![\w])/g,
    accept: (m) => {
      const digits = m.replace(/\D/g, '').length;
      return digits >= 9 && digits <= 15;
    },
  },
  // Without separators: E.164 with its "+", a national number with its trunk "0" (UK, FR, DE,
  // ...), or a NANP number (area code and exchange both start 2-9). A bare number of another
  // shape (an order number, a timestamp) is not a phone number.
  { kind: 'PHONE', pattern: /(?<![\w+.,/-])(?:\+[1-9]\d{9,14}|0[1-9]\d{8,9}|[2-9]\d{2}[2-9]\d{6})(?!\w|[.,/-]\d)/g },
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
      const groups = rest.filter((g): g is string => typeof g === 'string');
      const replaced = rule.replace ? rule.replace(match, ...groups) : `[${rule.kind}]`;
      if (replaced !== match) counts[rule.kind] = (counts[rule.kind] ?? 0) + 1;
      return replaced;
    });
  }
  return { text, counts };
}

/** A flagged stretch of text: [start, end) in UTF-16 units, and what it looks like. */
export interface SensitiveSpan {
  start: number;
  end: number;
  kind: RedactionKind;
}

/** Why a kind is flagged, in a few words a person understands. */
export const REDACTION_REASONS: Readonly<Record<RedactionKind, string>> = {
  PRIVATE_KEY: 'a private key',
  TOKEN: 'a login token (JWT)',
  KEY: 'an API key or secret',
  SECRET: 'a password or secret',
  EMAIL: 'an email address',
  IBAN: 'a bank account number (IBAN)',
  CARD: 'a payment card number',
  SSN: 'a US social security number',
  ID: 'a national identity number',
  PHONE: 'a phone number',
};

/**
 * Where the redaction rules fire in `input` itself (not in a partly redacted copy): each rule in
 * order, a stretch an earlier rule claimed is not flagged again. For showing a paste's flagged
 * spans in place; `redact` makes the replacement.
 */
export function findSensitive(input: string): SensitiveSpan[] {
  const spans: SensitiveSpan[] = [];
  for (const rule of RULES) {
    for (const m of input.matchAll(rule.pattern)) {
      const start = m.index;
      const end = start + m[0].length;
      if (rule.accept && !rule.accept(m[0])) continue;
      const groups = m.slice(1).filter((g): g is string => typeof g === 'string');
      if (rule.replace && rule.replace(m[0], ...groups) === m[0]) continue;
      if (spans.some((s) => start < s.end && s.start < end)) continue;
      spans.push({ start, end, kind: rule.kind });
    }
  }
  return spans.sort((a, b) => a.start - b.start);
}

/** `[IBAN]` for the longest prefix (whole groups) of `m` that is a valid IBAN; `m` unchanged if none is. */
function redactIbanPrefix(m: string): string {
  for (let end = m.length; end >= 15; end--) {
    // Only at a boundary: the end of the run or before a space, never inside a group.
    if (end < m.length && !/[ \u00a0]/.test(m[end]!)) continue;
    if (ibanChecksumOk(m.slice(0, end))) return `[IBAN]${m.slice(end)}`;
  }
  return m;
}

function nhsOk(d: string): boolean {
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += Number(d[i]) * (10 - i);
  const check = 11 - (sum % 11);
  return check !== 10 && (check === 11 ? 0 : check) === Number(d[9]);
}

function spanishIdOk(m: string): boolean {
  const s = m.replace(/-/g, '');
  const nie = /^[XYZ]\d{7}[A-Z]$/.test(s);
  if (!nie && !/^\d{8}[A-Z]$/.test(s)) return false;
  const digits = nie ? String('XYZ'.indexOf(s[0]!)) + s.slice(1, 8) : s.slice(0, 8);
  return 'TRWAGMYFPDXBNJZSQVHLCKE'[Number(digits) % 23] === s.at(-1);
}

function nirOk(m: string): boolean {
  const s = m.replace(/ /g, '');
  // Corsica: 2A and 2B count as 19 and 18 in the key computation.
  const body = s.slice(0, 13).replace('2A', '19').replace('2B', '18');
  return 97 - Number(BigInt(body) % 97n) === Number(s.slice(13));
}

function belgianOk(m: string): boolean {
  const d = m.replace(/\D/g, '');
  const check = Number(d.slice(9));
  // Born from 2000 on, the number is prefixed with 2 before the check.
  return 97 - Number(BigInt(d.slice(0, 9)) % 97n) === check || 97 - Number(BigInt(`2${d.slice(0, 9)}`) % 97n) === check;
}

function peselOk(d: string): boolean {
  const w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += Number(d[i]) * w[i]!;
  if ((10 - (sum % 10)) % 10 !== Number(d[10])) return false;
  // The month carries the century (+20 for 2000-2099 ...): only real months count.
  const month = Number(d.slice(2, 4)) % 20;
  const day = Number(d.slice(4, 6));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
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
  const s = iban.replace(/[ \u00a0]/g, '');
  if (s.length < 15 || s.length > 34) return false;
  const rearranged = s.slice(4) + s.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const value = /[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}
