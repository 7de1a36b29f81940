/**
 * C2SP signed notes and cosignature/v1: parsing, verifier keys, and verification against
 * published vectors from other implementations (golang.org/x/mod sumdb/note's PeterNeumann
 * note, and a checkpoint of the staging CT log arche2025h1 as cosigned by the public witness
 * remora.n621.de), then our own signing round trip and the verifier policy.
 */
import { describe, expect, it } from 'vitest';
import { getPublicKey } from '../../shared/ed25519.ts';
import { checkpointBody, signedNote } from '../../shared/epoch.ts';
import { signEd25519 } from '../../shared/ed25519.ts';
import { utf8 } from '../../shared/encoding.ts';
import {
  NOTE_TYPE_COSIGNATURE_V1,
  NOTE_TYPE_ED25519,
  formatVerifierKey,
  parseNote,
  parseVerifierKey,
  verifyNoteSignature,
} from '../../shared/note.ts';
import {
  addCheckpointBody,
  checkCosignatures,
  cosign,
  logVerifierKeyText,
  parseAddCheckpointBody,
  parseCosignatureLines,
  parseTlogSize,
  parseWitnessList,
  verifyCosignature,
  withSignatureLines,
} from '../../shared/witness.ts';

// golang.org/x/mod/sumdb/note, the package documentation's example.
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const PETER_NOTE =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n" +
  '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

// A real checkpoint of the staging CT log arche2025h1 with the cosignatures of public witnesses.
const REMORA_VKEY = 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2';
const ARCHE_VKEY = 'arche2025h1.staging.ct.transparency.dev+ba2f06c0+AU0vHmlGCS/PdN8b2OaGmKprLI8HKM+dJ472xgFYh15f';
const ARCHE_CHECKPOINT = `arche2025h1.staging.ct.transparency.dev
1432088532
U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=

\u2014 arche2025h1.staging.ct.transparency.dev zTM8sQAAAZ5W0WdjBAMARjBEAiBjW5IQf9pvsYLfQFX6hoGREPMHbdQ3urbllzalApkptQIgIpwtEroeW2BXaHAI4kJXFbon5Ch9MNL5zRNZ55lvGt0=
\u2014 arche2025h1.staging.ct.transparency.dev ui8GwCF1+kWqZrxGdhj4aX3gcw7XUlXQQabg/27lefwhUkzbC3NygNI75MdhL1bfTW9g8Ei59RA23oHP7Ry1k3ZFWwQ=
\u2014 transparency.dev/DEV:witness-little-garden 2AQqhwAAAABqEiEgzgFIqqhbUoDwjMWE6UP8nd8/KYTzwZ2rhIgcqoXHAwVkjZr4AscylP3v7sEodkRAErumC2q44vdgJY096st5BQ==
\u2014 witness1.smartit.nu/witness1 pIyCDwAAAABqEiEghIp82KWebrw7/oHQwlTAm3g2RKS4+eebl8eO0WH+/iEcxZ75W3u5hNI7TOQtmJbqmNWVuE0tgh0XwzdZsDsUAQ==
\u2014 remora.n621.de 2net5wAAAABqEiEgPlfF3V06o0Y+fHM+J5J9s27wgxxcOVSpZ/2g/KSiXCg9DEZI+aVCIobWX9sXTynk5XeU/zZ0WBxtqB0DrAWfBw==
\u2014 witness.stagemole.eu Z/euoAAAAABqEiEgw0i+7g2ENfDAWHmtRzCfKTHSDwYDJA2NmKeGi9Y8FtEyOUvVr+AJmIY/2TUFucgKi7lI7cUiOvKFYe/TmN9DAg==
`;

describe('signed notes (c2sp.org/signed-note)', () => {
  it('parses a verifier key and re-derives its key ID', () => {
    const k = parseVerifierKey(PETER_VKEY);
    expect(k).toMatchObject({ name: 'PeterNeumann', keyIdHex: 'c74f20a3', type: NOTE_TYPE_ED25519 });
    expect(formatVerifierKey(k.name, k.type, k.publicKey)).toBe(PETER_VKEY);
    expect(parseVerifierKey(REMORA_VKEY).type).toBe(NOTE_TYPE_COSIGNATURE_V1);
  });

  it('refuses verifier keys whose ID is not derived, or that are mangled', () => {
    expect(() => parseVerifierKey(PETER_VKEY.replace('c74f20a3', 'c74f20a4'))).toThrow(/not derived/);
    expect(() => parseVerifierKey(PETER_VKEY.replace('c74f20a3', 'C74F20A3'))).toThrow(/hex/);
    expect(() => parseVerifierKey('PeterNeumann')).toThrow(RangeError);
    expect(() => parseVerifierKey(`${PETER_VKEY}=`)).toThrow(RangeError);
    expect(() => parseVerifierKey(`Peter Neumann${PETER_VKEY.slice(12)}`)).toThrow(RangeError);
  });

  it('verifies the sumdb/note example and refuses it altered', async () => {
    const key = parseVerifierKey(PETER_VKEY);
    const note = parseNote(PETER_NOTE);
    expect(note.signatures).toHaveLength(1);
    expect(await verifyNoteSignature(note, key)).toBe(true);
    expect(await verifyNoteSignature(parseNote(PETER_NOTE.replace('problem,', 'problem;')), key)).toBe(false);
  });

  it('refuses malformed notes', () => {
    expect(() => parseNote('text\n')).toThrow(/blank line/);
    expect(() => parseNote('text\n\n\u2014 a AAAA\n')).toThrow(/key ID and a signature/);
    expect(() => parseNote('te\txt\n\n\u2014 a AAAAAAAA\n')).toThrow(/control/);
    expect(() => parseNote('text\n\n- a AAAAAAAA\n')).toThrow(/signature line/);
    expect(() => parseNote('text\n\n\u2014 a AAAAAAAA')).toThrow(/newline/);
  });
});

describe('cosignature/v1 (c2sp.org/tlog-cosignature)', () => {
  it('verifies the public witness remora.n621.de on a real CT checkpoint, and the log signature', async () => {
    const note = parseNote(ARCHE_CHECKPOINT);
    const c = await verifyCosignature(note, parseVerifierKey(REMORA_VKEY));
    expect(c).toMatchObject({ name: 'remora.n621.de', keyIdHex: 'da77ade7' });
    expect(c!.timestamp).toBe(0x6a122120);
    expect(await verifyNoteSignature(note, parseVerifierKey(ARCHE_VKEY))).toBe(true);
    const policy = { minCosignatures: 1, witnessKeys: [parseVerifierKey(REMORA_VKEY)] };
    expect((await checkCosignatures(ARCHE_CHECKPOINT, policy)).ok).toBe(true);
  });

  it('fails the whole note when a known key\'s cosignature does not verify (altered size)', async () => {
    const altered = ARCHE_CHECKPOINT.replace('1432088532', '1432088533');
    await expect(verifyCosignature(parseNote(altered), parseVerifierKey(REMORA_VKEY))).rejects.toThrow(/does not verify/);
    const r = await checkCosignatures(altered, { minCosignatures: 1, witnessKeys: [parseVerifierKey(REMORA_VKEY)] });
    expect(r).toMatchObject({ ok: false, name: 'witness_cosignatures' });
  });

  it('signs cosignatures that verify, and the policy counts distinct trusted witnesses', async () => {
    const seed = new Uint8Array(32).fill(7);
    const pub = getPublicKey(seed);
    const logSeed = new Uint8Array(32).fill(9);
    const logPub = getPublicKey(logSeed);
    const origin = 'svc/epochs/test-key';
    const body = checkpointBody(origin, 3, new Uint8Array(32).fill(1));
    const checkpoint = signedNote(body, origin, logPub, signEd25519(logSeed, utf8(body)));
    expect(await verifyNoteSignature(parseNote(checkpoint), parseVerifierKey(logVerifierKeyText(origin, logPub)))).toBe(true);

    const witnessKey = parseVerifierKey(formatVerifierKey('witness.test/w1', NOTE_TYPE_COSIGNATURE_V1, pub));
    const line = cosign('witness.test/w1', seed, pub, body, 1_700_000_000);
    const cosigned = withSignatureLines(checkpoint, [line, line]);
    expect(parseNote(cosigned).signatures).toHaveLength(2);
    const ok = await checkCosignatures(cosigned, { minCosignatures: 1, witnessKeys: [witnessKey] });
    expect(ok).toMatchObject({ ok: true, cosignatures: [{ name: 'witness.test/w1', timestamp: 1_700_000_000 }] });

    // Two required, one trusted witness signed: the check names the one missing.
    const other = parseVerifierKey(formatVerifierKey('witness.test/w2', NOTE_TYPE_COSIGNATURE_V1, getPublicKey(new Uint8Array(32).fill(8))));
    const short = await checkCosignatures(cosigned, { minCosignatures: 2, witnessKeys: [witnessKey, other] });
    expect(short.ok).toBe(false);
    expect(short.detail).toMatch(/missing: witness\.test\/w2/);
    // The plain checkpoint has none.
    expect((await checkCosignatures(checkpoint, { minCosignatures: 1, witnessKeys: [witnessKey] })).ok).toBe(false);
    expect((await checkCosignatures(undefined, { minCosignatures: 1, witnessKeys: [witnessKey] })).detail).toMatch(/missing cosigned_checkpoint/);
    // A 0x01 key of the same name is not a cosigner: refused by the verifier.
    await expect(verifyCosignature(parseNote(cosigned), parseVerifierKey(formatVerifierKey('witness.test/w1', NOTE_TYPE_ED25519, pub)))).rejects.toThrow(/0x04/);
  });
});

describe('add-checkpoint wire format (c2sp.org/tlog-witness)', () => {
  it('round-trips the request body and parses the answers', () => {
    const proof = [new Uint8Array(32).fill(2), new Uint8Array(32).fill(3)];
    const cp = 'o\n2\nAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\n\n\u2014 o AAAAAAAA\n';
    const body = addCheckpointBody(1, proof, cp);
    expect(body.startsWith('old 1\nAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=\n')).toBe(true);
    const parsed = parseAddCheckpointBody(body);
    expect(parsed).toMatchObject({ oldSize: 1, checkpoint: cp });
    expect(parsed.proof).toEqual(proof);
    expect(() => parseAddCheckpointBody('old 01\n\ncp')).toThrow(/old/);
    expect(() => parseAddCheckpointBody('old 1\nAAAA\n\ncp')).toThrow(/32-byte/);
    expect(parseTlogSize('12\n')).toBe(12);
    expect(() => parseTlogSize('12')).toThrow(RangeError);
    expect(parseCosignatureLines('\u2014 w AAAAAAAA\n')).toHaveLength(1);
    expect(() => parseCosignatureLines('w AAAAAAAA\n')).toThrow(RangeError);
  });

  it('parses a witness list and names every problem without echoing values', () => {
    const pub = getPublicKey(new Uint8Array(32).fill(7));
    const key = formatVerifierKey('witness.test/w1', NOTE_TYPE_COSIGNATURE_V1, pub);
    const ok = parseWitnessList(JSON.stringify([{ name: 'witness.test/w1', url: 'https://w.example/sub/', key }]), 'SVC_WITNESSES');
    expect(ok.problems).toEqual([]);
    expect(ok.witnesses[0]).toMatchObject({ name: 'witness.test/w1', url: 'https://w.example/sub' });
    const bad = parseWitnessList(JSON.stringify([{ name: 'other', url: 'ftp://secret-host', key: PETER_VKEY }]), 'SVC_WITNESSES');
    expect(bad.witnesses).toEqual([]);
    expect(bad.problems).toEqual([
      'SVC_WITNESSES[0].key: expected a cosignature/v1 key (type 0x04)',
      "SVC_WITNESSES[0].name: expected the key's name",
      'SVC_WITNESSES[0].url: expected an http(s) URL without credentials, query or fragment',
    ]);
    expect(bad.problems.join(' ')).not.toContain('secret-host');
    expect(parseWitnessList('{', 'SVC_WITNESSES').problems[0]).toMatch(/not JSON/);
  });
});
