/**
 * Raw material is refused from tenant policy (interface-spec "What the service does" 3: "Raw
 * prompt, document, key or secret material is not stored in policy").
 *
 * The first defence is the policy's shape (policy/document.ts): action types are the pack's own
 * ids, review routes match `<channel>:<target>`, and the only free text is a label of at most
 * 64 characters and a note of at most 140. This module is the second: before the shape is
 * checked, every string value and every undeclared key anywhere in the submitted policy is
 * scanned, so raw material is answered as 422 `raw_content_rejected` naming each offending path
 * and the rule it broke, and is never stored, sealed or echoed (messages never quote the value).
 *
 * Bounded work: too_long is decided first, so a longer value (or undeclared key) is refused
 * without any pattern seeing it, and every pattern below runs in time linear in its input (each
 * unbounded run starts only where its character class begins, by a lookbehind, so no match is
 * retried from inside a run; `npm run bench -- input` fits the exponent).
 *
 * Rules, in the order they are reported (one hit per value, the first rule that matches):
 *   secret_field_name    an undeclared key named like a secret or raw content (password, token,
 *                        api_key, private_key, credential, prompt, document, content, …)
 *   pem_block            PEM armour "-----BEGIN …-----" (private keys, certificates)
 *   known_secret_prefix  a credential with a well-known prefix: svc_test_/svc_live_ (this
 *                        service's keys), whsec_ (webhook signing secrets), sk-, sk_live_/
 *                        sk_test_/rk_live_/rk_test_ (API secret keys), xoxa-/xoxb-/xoxp-/xoxr-/
 *                        xoxs- (chat-platform tokens), AKIA/ASIA + 16 (cloud access key ids),
 *                        ghp_/gho_/ghu_/ghs_/ghr_/github_pat_, glpat- (code-host tokens), AIza
 *                        (cloud API keys)
 *   jwt                  a JWT/JWS/JWE: "eyJ…" segments joined by dots (RFC 7519 §3, RFC 7515
 *                        §7.1), or any three dot-joined base64url segments of 16+ characters
 *   url_credentials      a URL with user:password@ (RFC 3986 §3.2.1 deprecates it)
 *   email_address        personal data, not policy
 *   phone_number         9 to 15 digits, optionally with +, spaces, dots, dashes or brackets
 *                        (E.164 allows at most 15); a date such as 2025-01-15 has only 8
 *   hex_blob             16+ hex characters mixing digits and the letters a-f, or 16+ digits
 *                        (digests, raw keys, card and account numbers)
 *   base64_blob          24+ characters of the base64 or base64url alphabet mixing upper case,
 *                        lower case and digits (encoded keys and documents; RFC 4648 §4, §5)
 *   high_entropy_token   16+ letters and digits with Shannon entropy of at least 3 bits per
 *                        character that do not read as words: under 30% of the letters are
 *                        vowels (random letters: ~19%; English: ~40%), or the run switches
 *                        between lower case, upper case and digits at 45%+ of its characters
 *                        (random base62: ~60%; CamelCase with a year: under 40%). Simulated on
 *                        random tokens, it misses ~1% of 16-character base62 and ~10% of
 *                        lowercase-and-digit ones; words, CamelCase and kebab-case ids pass.
 *   control_characters   a line break or other control character: prompts, documents and PEM
 *                        bodies span lines, policy values never do
 *   too_long             longer than 140 characters: policy values are short ids and labels, so
 *                        a long string is content
 *
 * Limits: a detector of this kind cannot prove absence. A short random token in a note can slip
 * past, and an unusual id can be refused (the message says which rule, so the tenant can
 * rephrase). That is why the shape, not this scan, is what keeps policy small and id-only.
 */
import type { FieldError } from '../core/errors.ts';
import { echoableName, jsonPointer } from '../core/errors.ts';

/** The longest string a policy holds (the note); anything longer is treated as content. */
export const POLICY_STRING_MAX = 140;

/** Nesting deeper than any valid policy is not scanned further; its parent fails the shape check. */
const MAX_DEPTH = 6;

export interface RawMaterialRule {
  id: string;
  description: string;
  test(value: string): boolean;
}

const SECRET_FIELD_NAME =
  /(secret|passw(or)?d|passphrase|token|api[_-]?key|private[_-]?key|access[_-]?key|credential|bearer|authori[sz]ation|cookie|session|prompt|document|content|raw|ssn)/i;

const KNOWN_PREFIXES = [
  /(?<![A-Za-z0-9])svc_(test|live)_[A-Za-z0-9]{8,}/,
  /(?<![A-Za-z0-9])whsec_[A-Za-z0-9+/=_-]{8,}/,
  /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])[sr]k_(live|test)_[A-Za-z0-9]{8,}/,
  /(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{6,}/,
  /(?<![A-Za-z0-9])(AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/,
  /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{20,}/,
  /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}/,
  /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{16,}/,
  /(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{30,}/,
];

const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/;
const DOTTED_BASE64URL = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/;
const URL_CREDENTIALS = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]+:[^\s/?#@]*@/i;
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/;
const PHONE = /(?<![\w.])\+?\d(?:[ ().-]{0,2}\d){8,14}(?![\w])/;
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;

/**
 * Whether some maximal run of `pattern` (a /g regex) in `value` satisfies `test`. The runs are
 * visited one at a time and the first hit stops the scan: collecting them all first (match)
 * would allocate one string per run and an ever-growing array, which made the cost grow faster
 * than the input on inputs made of many short runs.
 */
function someRun(value: string, pattern: RegExp, test: (run: string) => boolean): boolean {
  pattern.lastIndex = 0;
  for (let m = pattern.exec(value); m !== null; m = pattern.exec(value)) {
    if (test(m[0])) return true;
  }
  return false;
}

const HEX_RUN = /[0-9a-fA-F]{16,}/g;
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const ALNUM_RUN = /[A-Za-z0-9]{16,}/g;

function isHexBlob(value: string): boolean {
  return /[0-9]{16,}/.test(value) || someRun(value, HEX_RUN, (r) => /[0-9]/.test(r) && /[a-fA-F]/.test(r));
}

function isBase64Blob(value: string): boolean {
  return someRun(value, BASE64_RUN, (r) => /[A-Z]/.test(r) && /[a-z]/.test(r) && /[0-9]/.test(r));
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const charClass = (ch: string) => (ch >= '0' && ch <= '9' ? 0 : ch >= 'a' && ch <= 'z' ? 1 : 2);

/** Share of adjacent characters that change class: ~0.6 for random base62, ~0.1 for words with a year. */
function classSwitchRatio(s: string): number {
  let switches = 0;
  for (let i = 1; i < s.length; i++) if (charClass(s[i]!) !== charClass(s[i - 1]!)) switches++;
  return switches / (s.length - 1);
}

/** Share of letters that are vowels; 0 when there are no letters. */
function vowelShare(s: string): number {
  const letters = s.replace(/[^A-Za-z]/g, '');
  return letters.length === 0 ? 0 : letters.replace(/[^aeiouAEIOU]/g, '').length / letters.length;
}

function isHighEntropyToken(value: string): boolean {
  return someRun(value, ALNUM_RUN, (r) => shannonEntropy(r) >= 3 && (vowelShare(r) < 0.3 || classSwitchRatio(r) >= 0.45));
}

/** The value rules, in reporting order; published by GET /tenant/policy/options. */
export const RAW_MATERIAL_RULES: readonly RawMaterialRule[] = [
  { id: 'pem_block', description: 'PEM armour (-----BEGIN …-----): private keys and certificates', test: (v) => /-----BEGIN [A-Z0-9 ]{1,40}-----/.test(v) },
  {
    id: 'known_secret_prefix',
    description:
      'A credential with a well-known prefix: svc_test_/svc_live_, whsec_, sk-, sk_live_/sk_test_/rk_live_/rk_test_, xoxa-/xoxb-/xoxp-/xoxr-/xoxs-, AKIA/ASIA, ghp_/gho_/ghu_/ghs_/ghr_/github_pat_, glpat-, AIza',
    test: (v) => KNOWN_PREFIXES.some((p) => p.test(v)),
  },
  { id: 'jwt', description: 'A JWT/JWS/JWE (eyJ… segments joined by dots), or three dot-joined base64url segments of 16+ characters', test: (v) => JWT.test(v) || DOTTED_BASE64URL.test(v) },
  { id: 'url_credentials', description: 'A URL carrying user:password@', test: (v) => URL_CREDENTIALS.test(v) },
  { id: 'email_address', description: 'An email address (personal data)', test: (v) => EMAIL.test(v) },
  { id: 'phone_number', description: 'A phone number: 9 to 15 digits, optionally with +, spaces, dots, dashes or brackets', test: (v) => PHONE.test(v) },
  { id: 'hex_blob', description: '16+ hex characters mixing digits and the letters a-f, or 16+ digits (digests, raw keys, card and account numbers)', test: isHexBlob },
  { id: 'base64_blob', description: '24+ characters of the base64 or base64url alphabet mixing upper case, lower case and digits', test: isBase64Blob },
  {
    id: 'high_entropy_token',
    description:
      '16+ letters and digits with Shannon entropy of 3+ bits per character that do not read as words: under 30% of the letters are vowels, or lower case, upper case and digits alternate at 45%+ of the characters',
    test: isHighEntropyToken,
  },
  { id: 'control_characters', description: 'A line break or other control character: prompts, documents and PEM bodies span lines', test: (v) => CONTROL.test(v) },
  { id: 'too_long', description: `Longer than ${POLICY_STRING_MAX} characters: policy values are short ids and labels`, test: (v) => v.length > POLICY_STRING_MAX },
];

const TOO_LONG = RAW_MATERIAL_RULES.find((r) => r.id === 'too_long')!;

export const SECRET_FIELD_NAME_RULE = {
  id: 'secret_field_name',
  description: 'An undeclared key named like a secret or raw content (password, token, api_key, private_key, credential, prompt, document, content, …)',
} as const;

/** Error `code` of a raw-material hit: `raw_material.<rule id>`. */
export const rawMaterialCode = (ruleId: string) => `raw_material.${ruleId}`;

/** The rule a single string breaks, if any. */
export function rawMaterialRule(value: string): RawMaterialRule | undefined {
  if (value.length > POLICY_STRING_MAX) return TOO_LONG;
  return RAW_MATERIAL_RULES.find((r) => r.test(value));
}

/**
 * Every place in `value` holding raw material, as body field errors under `at`.
 * `isDeclaredKey(path, key)` says whether the policy's shape declares that key at that path
 * (declared keys, such as action type ids, are checked by the shape, not by their name).
 */
export function findRawMaterial(
  value: unknown,
  isDeclaredKey: (path: readonly (string | number)[], key: string) => boolean,
  at: readonly (string | number)[] = [],
): FieldError[] {
  const out: FieldError[] = [];
  const visit = (v: unknown, path: (string | number)[]) => {
    if (typeof v === 'string') {
      const rule = rawMaterialRule(v);
      if (rule) out.push(hit([...at, ...path], rule.id, rule.description));
      return;
    }
    if (typeof v !== 'object' || v === null || path.length >= MAX_DEPTH) return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => visit(item, [...path, i]));
      return;
    }
    for (const [key, child] of Object.entries(v)) {
      if (!isDeclaredKey(path, key)) {
        const rule = key.length <= POLICY_STRING_MAX && SECRET_FIELD_NAME.test(key) ? SECRET_FIELD_NAME_RULE : rawMaterialRule(key);
        if (rule) {
          // The key itself is the problem; its value is not stored either way.
          out.push(hit([...at, ...path, key], rule.id, rule.description, 'field name'));
          continue;
        }
      }
      visit(child, [...path, key]);
    }
  };
  visit(value, []);
  return out;
}

function hit(path: (string | number)[], ruleId: string, description: string, what = 'value'): FieldError {
  return {
    in: 'body',
    // Never the value: it may be the secret; a long member name is abbreviated.
    path: jsonPointer(path.map((p) => (typeof p === 'string' ? echoableName(p) : p))),
    message: `raw material is not stored in policy: this ${what} breaks rule ${ruleId} (${description})`,
    code: rawMaterialCode(ruleId),
  };
}
