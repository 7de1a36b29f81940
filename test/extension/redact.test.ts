/** Client-side redaction: obvious identifiers go, ordinary text stays. */
import { describe, expect, it } from 'vitest';
import { findSensitive, ibanChecksumOk, luhnOk, redact } from '../../extension/utils/redact.ts';

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

  // One table per pattern class: what it must catch, and near misses it must leave alone.
  describe.each([
    {
      kind: 'PHONE',
      caught: ['call 4155552671 now', 'call +447700900123.', 'ring 07700900123 today', 'portable 0612345678', 'E.164 +4930901820'],
      left: ['order 1700000000', 'invoice 1234567890', 'amount 12345678.90', 'ref 123456789', 'ISBN 9780306406157', 'ts 1700000000000', 'v4155552671b'],
    },
    {
      kind: 'ID',
      caught: ['DNI 12345678Z', 'DNI 12345678-Z', 'NIE X1234567L', 'CF RSSMRA85T10A562S', 'NIR 1 85 05 78 006 084 91', 'NIR 1850578006084 91', 'BE 85.07.30-033.28', 'PESEL 44051401359', 'NHS 943 476 5919', 'NI AB 12 34 56 C'],
      left: ['DNI 12345678A', 'NIR 1 85 05 78 006 084 36', 'BE 85.07.30-033.29', 'PESEL 44051401358', 'NHS 943 476 5918', 'code RSSMRA85T10A562', 'NI QQ 12 34 56 C'],
    },
    {
      kind: 'IBAN',
      caught: ['IBAN DE89 3704 0044 0532 0130 00 please', 'IBAN DE89370400440532013000', 'IBAN FR14 2004 1010 0505 0001 3M02 606', 'IBAN GB82\u00a0WEST\u00a01234\u00a05698\u00a07654\u00a032', 'GB82 WEST 1234 5698 7654 32 AND MORE'],
      left: ['IBAN DE89 3704 0044 0532 0130 01', 'ref DE12 ABCD', 'GB00 WEST 1234 5698 7654 32'],
    },
    {
      kind: 'TOKEN',
      caught: ['Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlLWJ5dGVz'],
      left: ['see eyJust.a.word', 'file name.part.ext'],
    },
    {
      kind: 'PRIVATE_KEY',
      caught: [
        '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----',
        '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
        '-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----',
        'pasted half: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI',
      ],
      left: ['-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----', '-----BEGIN CERTIFICATE-----'],
    },
    {
      kind: 'SECRET',
      caught: ['postgres://app:s3cretPass@db.internal:5432/prod', 'mongodb+srv://admin:p%40ss@cluster0.example.net/db', 'amqp://guest:guest@localhost:5672/', 'Server=db;User Id=sa;Password=Hunter2!;'],
      left: ['https://example.com/path?x=1', 'postgres://db.internal:5432/prod', 'http://user@host/'],
    },
  ])('$kind', ({ kind, caught, left }) => {
    it.each(caught.map((t) => t.replace(/\\n/g, '\n').replace(/\\u00a0/g, '\u00a0')))('catches %j', (input) => {
      const r = redact(input);
      expect(r.counts[kind as keyof typeof r.counts], r.text).toBe(1);
      expect(r.text).toContain(`[${kind}]`);
    });
    it.each(left.map((t) => t.replace(/\\n/g, '\n')))('leaves %j to the other rules', (input) => {
      expect(redact(input).counts[kind as keyof ReturnType<typeof redact>['counts']] ?? 0).toBe(0);
    });
  });

  it('finds the flagged spans in the original text, for showing a paste in place', () => {
    const text = 'Mail ada@example.com, key -----BEGIN PRIVATE KEY-----\nMC4\n-----END PRIVATE KEY----- and call 4155552671.';
    const spans = findSensitive(text);
    expect(spans.map((s) => [s.kind, text.slice(s.start, s.end)])).toEqual([
      ['EMAIL', 'ada@example.com'],
      ['PRIVATE_KEY', '-----BEGIN PRIVATE KEY-----\nMC4\n-----END PRIVATE KEY-----'],
      ['PHONE', '4155552671'],
    ]);
    expect(findSensitive('Summarise the quarterly figures: revenue 1234567890, up 4%.')).toEqual([]);
  });

  it('keeps what a connection string needs to be read: scheme, user and host', () => {
    expect(redact('postgres://app:s3cretPass@db.internal:5432/prod').text).toBe('postgres://app:[SECRET]@db.internal:5432/prod');
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
