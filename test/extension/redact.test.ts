/** Client-side redaction (issue 5, item 2): obvious identifiers go, ordinary text stays. */
import { describe, expect, it } from 'vitest';
import { ibanChecksumOk, luhnOk, redact } from '../../extension/utils/redact.ts';

describe('redact', () => {
  it.each([
    ['Mail ada.lovelace@example.co.uk today', 'Mail [EMAIL] today', 'EMAIL'],
    ['Call +1 (415) 555-0132 or 020 7946 0958', 'Call [PHONE] or [PHONE]', 'PHONE'],
    ['Card 4111 1111 1111 1111 expires soon', 'Card [CARD] expires soon', 'CARD'],
    ['Card 5500-0000-0000-0004.', 'Card [CARD].', 'CARD'],
    ['SSN 123-45-6789 on file', 'SSN [SSN] on file', 'SSN'],
    ['NI number AB 12 34 56 C', 'NI number [ID]', 'ID'],
    ['IBAN GB82 WEST 1234 5698 7654 32 please', 'IBAN [IBAN] please', 'IBAN'],
    ['key svc_test_oNwlZBbaFVEXf2gVrcr0MrqE here', 'key [KEY] here', 'KEY'],
    ['export OPENAI=sk-proj-abcdefghijklmnop123456', 'export OPENAI=[KEY]', 'KEY'],
    ['aws AKIAIOSFODNN7EXAMPLE', 'aws [KEY]', 'KEY'],
    ['token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'token [TOKEN]', 'TOKEN'],
    ['password: hunter2!', 'password: [SECRET]', 'SECRET'],
    ['-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIB\n-----END PRIVATE KEY-----', '[PRIVATE_KEY]', 'PRIVATE_KEY'],
    ['sha e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 end', 'sha [KEY] end', 'KEY'],
  ])('%s', (input, expected, kind) => {
    const r = redact(input);
    expect(r.text).toBe(expected);
    expect(r.counts[kind as keyof typeof r.counts]).toBeGreaterThan(0);
  });

  it('leaves ordinary text alone: dates, times, amounts, short numbers, case citations', () => {
    const text = 'On 2024-01-15 at 10:30 the court awarded $12,500 in case 21-cv-0042; see Smith v. Jones, 123 F.3d 456 (2d Cir. 1999), page 12.';
    expect(redact(text)).toEqual({ text, counts: {} });
  });

  it('does not call a number that fails its checksum a card or an IBAN', () => {
    expect(redact('order 4111111111111112').text).toBe('order 4111111111111112');
    expect(redact('order 4111 1111 1111 1112').text).not.toContain('[CARD]');
    expect(redact('GB00 WEST 1234 5698 7654 32').text).not.toContain('[IBAN]');
  });

  it('counts every removal by kind and keeps nothing of what it removed', () => {
    const r = redact('a@b.io and c@d.io, card 4242424242424242');
    expect(r.counts).toEqual({ EMAIL: 2, CARD: 1 });
    expect(r.text).not.toMatch(/a@b|4242/);
  });

  it('checksums: Luhn (ISO/IEC 7812-1) and IBAN mod 97 (ISO 13616-1)', () => {
    expect(luhnOk('4111111111111111')).toBe(true);
    expect(luhnOk('4111111111111112')).toBe(false);
    expect(ibanChecksumOk('DE89 3704 0044 0532 0130 00')).toBe(true);
    expect(ibanChecksumOk('DE89 3704 0044 0532 0130 01')).toBe(false);
  });
});
